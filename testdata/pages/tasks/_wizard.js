// Each step of the booking wizard is its own document: a GET form carries
// the answers so far to the next page. A step's Continue button is enabled
// once its required fields are filled.
function wizardStep() {
  const form = document.querySelector('form');
  const next = form.querySelector('[type=submit]');
  const params = new URLSearchParams(location.search);
  for (const [k, v] of params) {
    if (form.elements[k]) continue;
    const h = document.createElement('input');
    h.type = 'hidden'; h.name = k; h.value = v;
    form.append(h);
  }
  const summary = document.getElementById('so-far');
  if (summary) summary.textContent = [...params.values()].join(' · ');
  const check = () => {
    next.disabled = [...form.querySelectorAll('[required]')].some(f => f.value.trim() === '');
  };
  form.addEventListener('input', check);
  form.addEventListener('change', check);
  check();
}
