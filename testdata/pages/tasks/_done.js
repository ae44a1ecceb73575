// The task pages report a finished task to the fixture (/eval/event), so the
// benchmark checks it out of band, without reading the page.
function taskDone(name) {
  fetch('/eval/event?e=task-' + name);
}
