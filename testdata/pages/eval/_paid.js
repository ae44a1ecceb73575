// The checkout pages report a payment the same way: the page says so and
// tells the fixture (/eval/event), which is how the harness sees the goal.
function paid() {
  if (window.top === window) document.title = 'Paid';
  document.getElementById('msg').textContent = 'Paid, thank you';
  fetch('/eval/event?e=paid');
}
