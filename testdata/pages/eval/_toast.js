// A snackbar, as Material-style component libraries show one: fixed at the
// bottom of the viewport, announced through a polite live region, with an
// optional action, and hidden by itself after a while (no close button).
function showSnackbar(text, {action, onAction, ms = 4000} = {}) {
  let bar = document.getElementById('snackbar');
  if (!bar) {
    bar = document.createElement('div');
    bar.id = 'snackbar';
    bar.setAttribute('role', 'status');
    bar.setAttribute('aria-live', 'polite');
    document.body.append(bar);
  }
  clearTimeout(bar._timer);
  bar.innerHTML = `<span class="text"></span>`;
  bar.querySelector('.text').textContent = text;
  if (action) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = action;
    b.onclick = () => { onAction?.(); hide(); };
    bar.append(b);
  }
  bar.className = 'open';
  function hide() {
    bar.className = 'closing';
    // Removed once the fade-out ends.
    setTimeout(() => bar.remove(), 200);
  }
  bar._timer = setTimeout(hide, ms);
}
