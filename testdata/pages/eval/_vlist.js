// A virtualised list, as react-window or TanStack Virtual build one: a
// sizer as tall as every row would be, and only the rows near the visible
// part of the scroller in the DOM, each positioned absolutely. Rows that
// stay in range keep their elements; rows that leave are removed.
//
// mountVirtualList({list, scroller, count, rowHeight, overscan, row}):
// list is the sizer (an element with role list), scroller the element
// that scrolls (window for the page itself), row(i) the row's HTML.
function mountVirtualList(o) {
  const overscan = o.overscan ?? 4;
  const rendered = new Map(); // index -> <li>
  o.list.style.position = 'relative';
  o.list.style.height = (o.count * o.rowHeight) + 'px';
  const viewport = () => {
    if (o.scroller === window) {
      // Where the list is within the page, and how much of it is visible.
      const top = o.list.getBoundingClientRect().top;
      return {start: -top, height: window.innerHeight};
    }
    return {start: o.scroller.scrollTop - o.list.offsetTop, height: o.scroller.clientHeight};
  };
  let frame = 0;
  function update() {
    frame = 0;
    const v = viewport();
    const first = Math.max(0, Math.floor(v.start / o.rowHeight) - overscan);
    const last = Math.min(o.count - 1, Math.ceil((v.start + v.height) / o.rowHeight) + overscan);
    for (const [i, li] of rendered) {
      if (i < first || i > last) {
        li.remove();
        rendered.delete(i);
      }
    }
    for (let i = first; i <= last; i++) {
      if (rendered.has(i)) continue;
      const li = document.createElement('li');
      li.className = 'row';
      li.setAttribute('aria-setsize', String(o.count));
      li.setAttribute('aria-posinset', String(i + 1));
      li.style.cssText = `position:absolute;left:0;right:0;top:${i * o.rowHeight}px;height:${o.rowHeight}px`;
      li.innerHTML = o.row(i);
      // In index order, so reading order follows the list.
      let next = null;
      for (const [j, el] of rendered) if (j > i && (!next || j < Number(next.dataset.index))) next = el;
      li.dataset.index = String(i);
      o.list.insertBefore(li, next);
      rendered.set(i, li);
    }
  }
  const schedule = () => { if (!frame) frame = requestAnimationFrame(update); };
  (o.scroller === window ? window : o.scroller).addEventListener('scroll', schedule, {passive: true});
  window.addEventListener('resize', schedule);
  update();
}

// The orders both pages list: newest first, the same every load.
function orderAt(i) {
  const number = 20999 - i;
  const day = new Date(Date.UTC(2026, 10, 20) - i * 36e5 * 11);
  const statuses = ['Delivered', 'Delivered', 'Delivered', 'Shipped', 'Returned'];
  return {
    number,
    date: day.toLocaleDateString('en-GB', {day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC'}),
    items: 1 + (number * 7) % 5,
    total: (((number * 37) % 19000) / 100 + 9.5).toFixed(2),
    status: statuses[number % statuses.length],
  };
}

function orderRow(i) {
  const o = orderAt(i);
  return `<span class="num">#${o.number}</span><span class="date">${o.date}</span>` +
    `<span class="items">${o.items} item${o.items > 1 ? 's' : ''}</span><span class="total">€${o.total}</span>` +
    `<span class="status">${o.status}</span>` +
    `<button type="button" data-order="${o.number}">Reorder<span class="sr"> order #${o.number}</span></button>`;
}

// Reorder: the cart takes the order's items, and the fixture is told which
// order it was (the scenario's goal names one).
function onReorder(e) {
  const b = e.target.closest('button[data-order]');
  if (!b) return;
  const n = b.dataset.order;
  document.getElementById('msg').textContent = `Items of order #${n} added to your cart`;
  fetch('/eval/event?e=reordered-' + n);
}
