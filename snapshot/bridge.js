(atDocumentStart) => {
  'use strict';
  // retrace in-page bridge: one instance per document (main frame and each
  // iframe). It walks the flat tree (shadow roots, slots), computes
  // role/name/state in the spirit of HTML-AAM and accname 1.2 (checked against
  // Chromium's accessibility tree), keeps refs stable per element, and returns
  // a compact tree. All state lives in this closure; nothing is put on window.
  //
  // api.snapshot({nextRef, root?, timeBudgetMs?, abortAfterMs?})
  //   -> {nextRef, tree: Node[], error?: 'unknown'|'removed', cut?: true, aborted?: true}
  // api.snapshotJSON(same)         -> the same, as a JSON string (what Go calls)
  // api.element(ref) -> Element | null;  api.status(ref) -> 'connected'|'removed'|'unknown'
  // api.info(ref)    -> {role, name, tag} | null
  // Node: {role, name?, ref?, tag, level?, checked?, disabled?, expanded?, selected?,
  //        pressed?, required?, invalid?, readonly?, value?, url?, placeholder?,
  //        frame?, children?}; text is {role: 'text', text}. Empty keys are omitted.

  // ---- Captured built-ins ---------------------------------------------------
  // Captured once, at injection, so a page that later replaces prototype
  // methods (even Function.prototype.call) cannot break or steer the walk.
  // uncurry(f)(self, ...args) === f.call(self, ...args), without looking up
  // .call at run time: the bound target is the original Function#call.
  const win = window;
  const doc = document;
  const FnProto = Function.prototype;
  const uncurry = FnProto.bind.bind(FnProto.call);
  const perfNow = typeof performance === 'object' && typeof performance.now === 'function'
    ? uncurry(FnProto.bind)(performance.now, performance) : () => 0;
  const getOwnDesc = Object.getOwnPropertyDescriptor;
  const objectKeys = Object.keys;
  const hasOwn = uncurry(Object.prototype.hasOwnProperty);
  const jsonQuote = JSON.stringify; // on strings, or on our own result when no toJSON is reachable
  const parseIntC = parseInt;
  const MapC = Map, WeakMapC = WeakMap, SetC = Set;
  const WeakRefC = typeof WeakRef === 'function' ? WeakRef : null;
  const getterOf = (proto, name) => {
    const d = proto ? getOwnDesc(proto, name) : undefined;
    return d && d.get ? uncurry(d.get) : null;
  };
  const methodOf = (proto, name) => {
    const d = proto ? getOwnDesc(proto, name) : undefined;
    return d && typeof d.value === 'function' ? uncurry(d.value) : null;
  };
  const protoOf = (name) => (typeof win[name] === 'function' ? win[name].prototype : null);

  const mapGet = methodOf(MapC.prototype, 'get'), mapSet = methodOf(MapC.prototype, 'set');
  const mapHas = methodOf(MapC.prototype, 'has');
  const wmGet = methodOf(WeakMapC.prototype, 'get'), wmSet = methodOf(WeakMapC.prototype, 'set');
  const setHas = methodOf(SetC.prototype, 'has'), setAdd = methodOf(SetC.prototype, 'add');
  const deref = WeakRefC ? methodOf(WeakRefC.prototype, 'deref') : null;

  const SP = String.prototype;
  const strTrim = methodOf(SP, 'trim'), strSlice = methodOf(SP, 'slice');
  const strLower = methodOf(SP, 'toLowerCase'), charCodeAt = methodOf(SP, 'charCodeAt');
  const strIndexOf = methodOf(SP, 'indexOf'), fromCodePoint = String.fromCodePoint;

  const NodeP = Node.prototype, ElementP = Element.prototype, HTMLElementP = HTMLElement.prototype;
  const nodeType = getterOf(NodeP, 'nodeType'), firstChild = getterOf(NodeP, 'firstChild');
  const nextSibling = getterOf(NodeP, 'nextSibling'), parentNode = getterOf(NodeP, 'parentNode');
  const parentElement = getterOf(NodeP, 'parentElement'), isConnected = getterOf(NodeP, 'isConnected');
  const ownerDocument = getterOf(NodeP, 'ownerDocument'), getRootNode = methodOf(NodeP, 'getRootNode');
  const charData = getterOf(CharacterData.prototype, 'data');
  const localName = getterOf(ElementP, 'localName'), namespaceURI = getterOf(ElementP, 'namespaceURI');
  const getAttr = methodOf(ElementP, 'getAttribute'), hasAttr = methodOf(ElementP, 'hasAttribute');
  const hasAttributes = methodOf(ElementP, 'hasAttributes'), matches = methodOf(ElementP, 'matches');
  const shadowRootOf = getterOf(ElementP, 'shadowRoot'), assignedSlot = getterOf(ElementP, 'assignedSlot');
  const textAssignedSlot = getterOf(Text.prototype, 'assignedSlot');
  const checkVisibility = methodOf(ElementP, 'checkVisibility'); // null on old engines
  const getRect = methodOf(ElementP, 'getBoundingClientRect');
  const rectWidth = getterOf(DOMRectReadOnly.prototype, 'width'), rectHeight = getterOf(DOMRectReadOnly.prototype, 'height');
  const shadowHost = getterOf(ShadowRoot.prototype, 'host');
  const assignedNodes = methodOf(protoOf('HTMLSlotElement'), 'assignedNodes');
  const docById = methodOf(Document.prototype, 'getElementById');
  const fromPoint = methodOf(Document.prototype, 'elementFromPoint');
  const nodeContains = methodOf(NodeP, 'contains');
  const rectLeft = getterOf(DOMRectReadOnly.prototype, 'left'), rectTop = getterOf(DOMRectReadOnly.prototype, 'top');
  const fragById = methodOf(DocumentFragment.prototype, 'getElementById');
  const docQuery = methodOf(Document.prototype, 'querySelector');
  const docBody = getterOf(Document.prototype, 'body'), docElement = getterOf(Document.prototype, 'documentElement');
  const isContentEditable = getterOf(HTMLElementP, 'isContentEditable');
  const onclickOf = getterOf(HTMLElementP, 'onclick');
  const nlLength = getterOf(NodeList.prototype, 'length'), nlItem = methodOf(NodeList.prototype, 'item');
  const docQueryAll = methodOf(Document.prototype, 'querySelectorAll');
  const fragQueryAll = methodOf(DocumentFragment.prototype, 'querySelectorAll');
  const elQuery = methodOf(ElementP, 'querySelector');
  const comparePosition = methodOf(NodeP, 'compareDocumentPosition');
  const getCS = uncurry(win.getComputedStyle);
  const cssValue = methodOf(CSSStyleDeclaration.prototype, 'getPropertyValue');
  const docSheets = getterOf(Document.prototype, 'styleSheets'), rootSheets = getterOf(ShadowRoot.prototype, 'styleSheets');
  const docAdopted = getterOf(Document.prototype, 'adoptedStyleSheets'), rootAdopted = getterOf(ShadowRoot.prototype, 'adoptedStyleSheets');
  const sheetsLength = getterOf(StyleSheetList.prototype, 'length'), sheetsItem = methodOf(StyleSheetList.prototype, 'item');
  const sheetRules = getterOf(CSSStyleSheet.prototype, 'cssRules');
  const ruleListLength = getterOf(CSSRuleList.prototype, 'length'), ruleListItem = methodOf(CSSRuleList.prototype, 'item');
  const ruleType = getterOf(CSSRule.prototype, 'type');
  const selectorText = getterOf(CSSStyleRule.prototype, 'selectorText'), ruleStyle = getterOf(CSSStyleRule.prototype, 'style');
  const styleRuleKids = getterOf(CSSStyleRule.prototype, 'cssRules'); // CSS nesting; null where unsupported
  const groupRules = getterOf(protoOf('CSSGroupingRule'), 'cssRules');
  const importSheet = getterOf(CSSImportRule.prototype, 'styleSheet');

  const InputP = HTMLInputElement.prototype;
  const inputType = getterOf(InputP, 'type'), inputValue = getterOf(InputP, 'value');
  const inputChecked = getterOf(InputP, 'checked'), inputIndeterminate = getterOf(InputP, 'indeterminate');
  const inputReadOnly = getterOf(InputP, 'readOnly');
  const textareaValue = getterOf(HTMLTextAreaElement.prototype, 'value');
  const textareaReadOnly = getterOf(HTMLTextAreaElement.prototype, 'readOnly');
  const optionSelected = getterOf(HTMLOptionElement.prototype, 'selected');
  const optionLabel = getterOf(HTMLOptionElement.prototype, 'label');
  const anchorHref = getterOf(HTMLAnchorElement.prototype, 'href');
  const areaHref = getterOf(HTMLAreaElement.prototype, 'href');
  const detailsOpen = getterOf(HTMLDetailsElement.prototype, 'open');

  // Closed shadow roots are not in el.shadowRoot. The bridge built at
  // document start (the init script, before any page script) wraps
  // attachShadow and keeps each closed root here, in the closure, where no
  // page script can read or change it. A bridge injected later (a frame that
  // predates the init script) sees open roots only.
  const closedRoots = new WeakMapC(); // host -> closed ShadowRoot
  let closedCount = 0;
  if (atDocumentStart === true) {
    const shadowMode = getterOf(ShadowRoot.prototype, 'mode');
    const d = getOwnDesc(ElementP, 'attachShadow');
    if (shadowMode && d && typeof d.value === 'function') {
      const attach = uncurry(d.value);
      // A method, so it has the native one's name and length and no prototype.
      const wrapped = { attachShadow(init) {
        const root = attach(this, init);
        if (shadowMode(root) === 'closed') { wmSet(closedRoots, this, root); closedCount++; }
        return root;
      } }.attachShadow;
      try {
        Object.defineProperty(ElementP, 'attachShadow', { __proto__: null, value: wrapped,
          writable: d.writable, enumerable: d.enumerable, configurable: d.configurable });
      } catch (e) { /* an earlier script froze it: open roots only */ }
    }
  }
  const shadowOf = (el) => shadowRootOf(el) || (closedCount > 0 ? wmGet(closedRoots, el) : undefined) || null;

  // An element with its own click listener (a custom menu's <li>) is a
  // click target that no role, attribute or cursor shows. The bridge built
  // at document start wraps addEventListener and notes, in the closure,
  // the elements that get a click, mousedown or pointerdown listener; a
  // listener on a container (a framework's delegation) marks the container
  // only, which has no use for a ref and is not given one (clickListened).
  const clickListeners = new WeakMapC(); // element -> true
  let listenedCount = 0;
  const ElementC = Element;
  if (atDocumentStart === true && typeof EventTarget === 'function') {
    const d = getOwnDesc(EventTarget.prototype, 'addEventListener');
    if (d && typeof d.value === 'function') {
      const add = uncurry(d.value);
      const wrapped = { addEventListener(type, listener, options) {
        if ((type === 'click' || type === 'mousedown' || type === 'pointerdown') && this instanceof ElementC) {
          wmSet(clickListeners, this, true);
          listenedCount++;
        }
        return add(this, type, listener, options);
      } }.addEventListener;
      try {
        Object.defineProperty(EventTarget.prototype, 'addEventListener', { __proto__: null, value: wrapped,
          writable: d.writable, enumerable: d.enumerable, configurable: d.configurable });
      } catch (e) { /* an earlier script froze it: listeners go unseen */ }
    }
  }
  // clickListened reports whether el has its own click listener and is
  // small enough to be one target (at most 3 child elements): a listener
  // on a large container is a framework's delegation, not a control.
  function clickListened(el) {
    if (listenedCount === 0 || wmGet(clickListeners, el) !== true) return false;
    let n = 0;
    for (let k = firstChild(el); k; k = nextSibling(k)) {
      if (nodeType(k) === 1 && ++n > 3) return false;
    }
    return true;
  }

  // ---- Change watch -----------------------------------------------------------
  // Whether the document may differ from the last watched snapshot: a
  // MutationObserver on the document and on every shadow root the walk met,
  // and the input, change and toggle events (a value typed is no mutation).
  // The first change disconnects the observer until the next watched
  // snapshot, so a busy page pays for one record, not one per mutation. A
  // MutationObserver the page replaced before this bridge was built cannot
  // be trusted: then the document always counts as changed.
  const fnToString = uncurry(FnProto.toString);
  const MOC = typeof MutationObserver === 'function' ? MutationObserver : null;
  const nativeMO = MOC !== null && strIndexOf(fnToString(MOC), '[native code]') >= 0;
  const moObserve = nativeMO ? methodOf(MOC.prototype, 'observe') : null;
  const moDisconnect = nativeMO ? methodOf(MOC.prototype, 'disconnect') : null;
  const moTake = nativeMO ? methodOf(MOC.prototype, 'takeRecords') : null;
  const listen = methodOf(EventTarget.prototype, 'addEventListener');
  const MO_OPTS = { attributes: true, childList: true, characterData: true, subtree: true };
  let changedSince = true, watching = false, watchedRoots = null;
  // edited lists the fields whose value alone changed (input and change
  // events, no mutation) since the watch began: a typed value is read again
  // from them alone (edits).
  let edited = null, editedSet = null;
  function stopWatch() {
    if (watching) { watching = false; watchedRoots = null; moDisconnect(observer); }
    edited = null; editedSet = null;
  }
  const observer = moObserve && moDisconnect && moTake ? new MOC(() => { changedSince = true; stopWatch(); }) : null;
  function startWatch() {
    stopWatch();
    if (observer === null) { changedSince = true; return; }
    changedSince = false;
    moObserve(observer, doc, MO_OPTS);
    watching = true;
    watchedRoots = new SetC();
  }
  function watchRoot(root) {
    if (watching && !setHas(watchedRoots, root)) { setAdd(watchedRoots, root); moObserve(observer, root, MO_OPTS); }
  }
  const evTarget = getterOf(typeof Event === 'function' ? Event.prototype : null, 'target');
  // A field whose value changes only its own line: not a radio, whose
  // group's other buttons change with it.
  const ownValue = (t) => {
    if (!t || nodeType(t) !== 1 || namespaceURI(t) !== HTML_NS) return false;
    const tag = localName(t);
    if (tag === 'textarea' || tag === 'select') return true;
    const type = getAttr(t, 'type');
    return tag === 'input' && (type === null || type === '' || type.toLowerCase() !== 'radio');
  };
  if (listen) {
    const mark = (ev) => {
      const t = evTarget && !changedSince && watching ? evTarget(ev) : null;
      if (t && ownValue(t)) {
        if (editedSet === null) { editedSet = new SetC(); edited = []; }
        if (!setHas(editedSet, t)) { setAdd(editedSet, t); edited[edited.length] = t; }
        return;
      }
      changedSince = true; stopWatch();
    };
    listen(doc, 'input', mark, true); listen(doc, 'change', mark, true); listen(doc, 'toggle', mark, true);
  }
  function changed() {
    if (!changedSince && watching && moTake(observer).length > 0) { changedSince = true; stopWatch(); }
    return changedSince || edited !== null;
  }
  // edits is changed for a change report: false, true (read the document
  // again), or the refs of the fields whose value alone changed, which it
  // then forgets while the watch goes on.
  function edits() {
    if (!changedSince && watching && moTake(observer).length > 0) { changedSince = true; stopWatch(); }
    if (changedSince) return true;
    if (edited === null) return false;
    const out = [];
    for (let i = 0; i < edited.length; i++) {
      const el = edited[i], ref = wmGet(refOf, el);
      if (!ref || !isConnected(el) || lookup(ref) !== el) { changedSince = true; stopWatch(); return true; }
      out[out.length] = ref;
    }
    edited = null; editedSet = null;
    return out;
  }

  const HTML_NS = 'http://www.w3.org/1999/xhtml', SVG_NS = 'http://www.w3.org/2000/svg';
  const MAX_DEPTH = 1000;     // DOM nesting walked before a marker replaces the rest
  const NAME_DEPTH = 200;     // nesting followed inside one accessible name
  const NAME_SCAN = 1000;     // stop gathering name text after this many chars
  const MAX_NAME = 200, MAX_VALUE = 2000, MAX_URL = 500;
  const DEEP_MARKER = '\u2026 (nesting deeper than ' + MAX_DEPTH + ' levels not shown)';

  // ---- Small string helpers (no regexes: RegExp.prototype is page-writable) --
  const isWs = (c) => c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 160;
  // Collapse whitespace runs to one space, keeping a single leading/trailing
  // space so adjacent pieces still join correctly. Returns s itself if unchanged.
  function collapse(s) {
    const n = s.length;
    let out = '', start = 0, changed = false;
    for (let i = 0; i < n; i++) {
      const c = charCodeAt(s, i);
      if (!isWs(c)) continue;
      let j = i + 1;
      while (j < n && isWs(charCodeAt(s, j))) j++;
      if (j - i > 1 || c !== 32) {
        out += strSlice(s, start, i) + ' ';
        start = j;
        changed = true;
      }
      i = j - 1;
    }
    return changed ? out + strSlice(s, start) : s;
  }
  const clean = (s) => (s ? strTrim(collapse(s)) : '');
  // Split on whitespace (String.prototype.split consults page-writable symbols).
  function words(s) {
    const res = [];
    let start = -1;
    for (let i = 0, n = s.length; i <= n; i++) {
      if (i === n || isWs(charCodeAt(s, i))) {
        if (start >= 0) { res[res.length] = strSlice(s, start, i); start = -1; }
      } else if (start < 0) start = i;
    }
    return res;
  }
  const setOf = (s) => {
    const o = { __proto__: null }, w = words(s);
    for (let i = 0; i < w.length; i++) o[w[i]] = true;
    return o;
  };
  const cap = (s, max) => (s.length > max ? strSlice(s, 0, max) + '\u2026' : s);
  const isTrue = (v) => v !== null && (v === 'true' || strLower(strTrim(v)) === 'true');

  // ---- Role tables ----------------------------------------------------------
  const ARIA_ROLES = setOf('alert alertdialog application article banner blockquote button caption cell ' +
    'checkbox code columnheader combobox comment complementary contentinfo definition deletion dialog ' +
    'directory document emphasis feed figure form generic grid gridcell group heading img image insertion ' +
    'link list listbox listitem log main mark marquee math menu menubar menuitem menuitemcheckbox ' +
    'menuitemradio meter navigation none note option paragraph presentation progressbar radio radiogroup ' +
    'region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong ' +
    'subscript superscript suggestion switch tab table tablist tabpanel term textbox time timer toolbar ' +
    'tooltip tree treegrid treeitem graphics-document graphics-object graphics-symbol');
  // Roles an agent acts on: an element with one of these (explicit) roles gets a ref.
  const INTERACTIVE = setOf('button link checkbox radio switch tab menuitem menuitemcheckbox menuitemradio ' +
    'option textbox searchbox combobox slider spinbutton treeitem scrollbar');
  const NAME_FROM_CONTENT = setOf('button cell checkbox columnheader gridcell heading link menuitem ' +
    'menuitemcheckbox menuitemradio option radio row rowheader switch tab tooltip treeitem term');
  // Wrappers: not emitted as nodes (their content is hoisted) unless they need a ref.
  // The roles an element with a click listener of its own can have and be
  // a target; landmarks, lists and the like hold targets instead.
  const LISTENER_TARGETS = setOf('generic listitem img cell gridcell row paragraph term definition');
  const HOIST = setOf('generic none presentation rowgroup code deletion emphasis insertion mark strong ' +
    'subscript superscript time');
  // Kept even when empty: a table must keep its empty cells to stay aligned.
  const KEEP_EMPTY = setOf('separator cell gridcell columnheader rowheader');
  const MIXED_OK = setOf('checkbox menuitemcheckbox option treeitem');
  const CHECKABLE = setOf('checkbox radio switch menuitemcheckbox menuitemradio option treeitem');
  const SELECTABLE = setOf('option tab gridcell row treeitem columnheader rowheader');
  const RANGE = setOf('slider spinbutton progressbar meter scrollbar');
  const EMBEDDED_TEXT = setOf('textbox searchbox combobox listbox');
  // Roles whose content Chromium leaves out when it is part of another
  // element's name from content (their aria-label still counts).
  const NO_NAME_RECURSE = setOf('alert alertdialog application article banner blockquote complementary ' +
    'contentinfo dialog document feed figure form grid group listbox log main marquee math menu menubar ' +
    'navigation note radiogroup region search status tabpanel tablist table timer toolbar tree treegrid');
  // ARIA "children presentational": their content is never walked.
  const NO_CHILDREN_ROLES = setOf('img progressbar meter separator slider scrollbar');
  const SKIP_TAGS = setOf('script style template noscript head meta link base title param source track datalist');
  // Tags whose DOM children are not rendered content (or are handled apart).
  const LEAF_TAGS = setOf('input textarea select img iframe frame svg video audio object embed progress meter option br hr canvas area');
  const FORM_TAGS = setOf('input select textarea button');
  const NO_VALUE_INPUTS = setOf('checkbox radio button submit reset image hidden');
  const SECTIONING = setOf('article aside main nav section');
  const SECTIONING_ROLES = setOf('article complementary main navigation region');
  const LABELABLE = setOf('input select textarea button meter progress output');
  const LABELABLE_SELECTOR = 'button,input:not([type=hidden]),meter,output,progress,select,textarea';

  // ---- Per-pass state -------------------------------------------------------
  // Refs survive across snapshots; caches live for one snapshot()/info() call.
  const refOf = new WeakMapC();   // Element -> "eN"
  const refTarget = new MapC();   // "eN" -> WeakRef(Element)
  let nextRef = 1;
  // Time budget of one snapshot(): past the deadline the walk stops and the
  // result says it was cut, so a huge page answers in time instead of
  // holding the page's main thread (and the server) hostage. Past abortAt
  // the caller has stopped waiting: all work stops (ABORT is thrown) and the
  // result says so, so an answer nobody reads does not keep the page busy.
  let deadline = 0, abortAt = 0, visits = 0, cut = false;
  const ABORT = { __proto__: null };
  // Counts a step of the pass (an element walked or named) and reads the
  // clock every 128 steps; returns whether the walk is cut.
  function overTime() {
    if ((++visits & 127) !== 0 || (deadline === 0 && abortAt === 0)) return cut;
    const now = perfNow();
    if (abortAt !== 0 && now > abortAt) throw ABORT;
    if (deadline !== 0 && now > deadline) cut = true;
    return cut;
  }
  let styleCache = null, roleCache = null; // Map(Element -> style flags / role)
  let csCache = null;                      // Map(Element -> CSSStyleDeclaration)
  let labelIndex = null;                   // Map(root -> Map(id -> label[]))
  let svgCache = null;                     // Map(svg -> draws widgets)
  let modalEl = null, modalPath = null;    // open modal dialog and its flat ancestors
  let nameFrom = 0, nameSourceEl = null;   // side results of nameOf()
  const NF_NONE = 0, NF_CONTENT = 1, NF_OTHER = 2, NF_DEFERRED = 3;

  // Style flags, cached per element and pass.
  const ST_HIDDEN = 1, ST_INVISIBLE = 2, ST_POINTER = 4, ST_CONTENTS = 8, ST_BLOCK = 16;
  const ST_SKIPS = 256; // the element renders, its content does not
  const K_VIS = 512, K_BLOCK = 1024, K_PTR = 2048, K_SKIPS = 4096; // which facts are known
  // Flags inherited down the walk.
  const P_VISIBLE = 1, P_POINTER = 2, P_ADISABLED = 4, P_MODAL_OK = 8;

  function beginPass() {
    genPass();
    styleCache = new MapC();
    csCache = new MapC();
    roleCache = new MapC();
    labelIndex = new MapC();
    svgCache = new MapC();
    modalEl = null;
    modalPath = null;
    try { modalEl = docQuery(doc, ':modal'); } catch (e) { modalEl = null; }
    if (modalEl) {
      // Everything outside an open modal dialog is inert: only the dialog and
      // the path leading to it are walked.
      modalPath = new SetC();
      for (let n = flatParent(modalEl); n; n = flatParent(n)) setAdd(modalPath, n);
    }
  }
  function endPass() {
    styleCache = csCache = roleCache = labelIndex = svgCache = modalEl = modalPath = null;
    nameSourceEl = null;
    genPass();
  }

  // Parent in the flat tree: the slot a node is assigned to, or the host of a shadow root.
  function flatParent(n) {
    const s = nodeType(n) === 1 ? assignedSlot(n) : nodeType(n) === 3 ? textAssignedSlot(n) : null;
    if (s) return s;
    const p = parentNode(n);
    if (p && nodeType(p) === 11) { try { return shadowHost(p); } catch (e) { return null; } }
    return p && nodeType(p) === 1 ? p : null;
  }

  // Style facts are read lazily and cached per pass: most elements only need
  // one checkVisibility call; display and cursor are read when they matter,
  // from at most one getComputedStyle per element.
  function styleOf(el) {
    let cs = mapGet(csCache, el);
    if (cs === undefined) { cs = getCS(win, el); mapSet(csCache, el, cs); }
    return cs;
  }
  const VIS_OPTS = { __proto__: null, visibilityProperty: true };
  const invisibleStyle = (cs) => { const v = cssValue(cs, 'visibility'); return v === 'hidden' || v === 'collapse'; };
  function styleInfo(el) {
    let f = mapGet(styleCache, el);
    if (f === undefined) f = 0; else if ((f & K_VIS) !== 0) return f;
    f |= K_VIS;
    // checkVisibility also catches what style alone does not: content-visibility
    // hidden subtrees (closed <details>, hidden=until-found) and unrendered nodes.
    if (!checkVisibility || !checkVisibility(el, VIS_OPTS)) {
      const cs = styleOf(el), display = cssValue(cs, 'display');
      if (display === 'none' || display === '') f |= ST_HIDDEN;
      else if (display === 'contents') {
        // No box of its own, so checkVisibility says nothing: ask the parent.
        const p = flatParent(el);
        if (p && ((styleInfo(p) & ST_HIDDEN) !== 0 || skipsContent(p))) f |= ST_HIDDEN;
        else f |= ST_CONTENTS | (invisibleStyle(cs) ? ST_INVISIBLE : 0);
      }
      else if (checkVisibility && !checkVisibility(el)) f |= ST_HIDDEN;
      else if (invisibleStyle(cs)) f |= ST_INVISIBLE;
    }
    mapSet(styleCache, el, f);
    return f;
  }
  // Block-level boxes separate text; inline ones glue it.
  function isBlock(el) {
    let f = mapGet(styleCache, el);
    if (f === undefined) f = 0; else if ((f & K_BLOCK) !== 0) return (f & ST_BLOCK) !== 0;
    const d = cssValue(styleOf(el), 'display');
    f |= K_BLOCK | (d !== '' && d !== 'none' && d !== 'contents' && strSlice(d, 0, 6) !== 'inline' ? ST_BLOCK : 0);
    mapSet(styleCache, el, f);
    return (f & ST_BLOCK) !== 0;
  }
  // The element is rendered but its content is not: content-visibility:hidden
  // (hidden=until-found too) or a closed <details> beyond its summary. Child
  // elements are caught by checkVisibility; this is for text and contents boxes.
  function skipsContent(el) {
    let f = mapGet(styleCache, el);
    if (f === undefined) f = 0; else if ((f & K_SKIPS) !== 0) return (f & ST_SKIPS) !== 0;
    const skip = (localName(el) === 'details' && namespaceURI(el) === HTML_NS && !detailsOpen(el)) ||
      cssValue(styleOf(el), 'content-visibility') === 'hidden';
    f |= K_SKIPS | (skip ? ST_SKIPS : 0);
    mapSet(styleCache, el, f);
    return skip;
  }
  function isPointer(el) {
    let f = mapGet(styleCache, el);
    if (f === undefined) f = 0; else if ((f & K_PTR) !== 0) return (f & ST_POINTER) !== 0;
    f |= K_PTR | (cssValue(styleOf(el), 'cursor') === 'pointer' ? ST_POINTER : 0);
    mapSet(styleCache, el, f);
    return (f & ST_POINTER) !== 0;
  }
  // Hidden for accessible-name purposes: not rendered, invisible or aria-hidden.
  function hiddenForName(el) {
    return (styleInfo(el) & (ST_HIDDEN | ST_INVISIBLE)) !== 0 || isTrue(getAttr(el, 'aria-hidden'));
  }

  // ---- Roles ----------------------------------------------------------------
  function explicitRole(el) {
    const r = getAttr(el, 'role');
    if (r === null) return '';
    const w = words(strLower(r));
    for (let i = 0; i < w.length; i++) {
      if (ARIA_ROLES[w[i]] === true) return w[i] === 'image' ? 'img' : w[i] === 'directory' ? 'list' : w[i];
    }
    return '';
  }
  function nativelyFocusable(el, tag) {
    return tag === 'button' || tag === 'select' || tag === 'textarea' || tag === 'input' ||
      ((tag === 'a' || tag === 'area') && hasAttr(el, 'href')) || hasAttr(el, 'tabindex');
  }
  function roleOf(el, tag, isHTML) {
    let r = mapGet(roleCache, el);
    if (r !== undefined) return r;
    r = explicitRole(el);
    // none/presentation on a focusable element is ignored (ARIA conflict resolution).
    if (r === '' || ((r === 'none' || r === 'presentation') && nativelyFocusable(el, tag))) {
      r = implicitRole(el, tag, isHTML);
    }
    mapSet(roleCache, el, r);
    return r;
  }
  function hasNameAttr(el) {
    return hasAttr(el, 'aria-label') || hasAttr(el, 'aria-labelledby') || hasAttr(el, 'title');
  }
  function inSectioning(el, tags) {
    for (let p = parentElement(el); p; p = parentElement(p)) {
      const t = localName(p);
      if (t === 'body') return false;
      if (tags[t] === true) return true;
      if (SECTIONING_ROLES[explicitRole(p)] === true) return true;
    }
    return false;
  }
  const ASIDE_SCOPE = setOf('article aside nav section');
  function implicitRole(el, tag, isHTML) {
    if (!isHTML) return namespaceURI(el) === SVG_NS ? svgRole(el, tag) : tag === 'math' ? 'math' : 'generic';
    switch (tag) {
      case 'a': case 'area': return hasAttr(el, 'href') ? 'link' : 'generic';
      case 'button': return 'button';
      case 'input': return inputRole(el);
      case 'select': {
        const size = parseIntC(getAttr(el, 'size'), 10);
        return hasAttr(el, 'multiple') || size > 1 ? 'listbox' : 'combobox';
      }
      case 'textarea': return 'textbox';
      case 'option': return 'option';
      case 'optgroup': case 'fieldset': case 'details': return 'group';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'img': // alt="" marks decoration, unless the author names it anyway
        return getAttr(el, 'alt') === '' && !hasNameAttr(el) ? 'presentation' : 'img';
      case 'ul': case 'ol': case 'menu': return 'list';
      case 'li': return isPresentational(parentElement(el)) ? 'generic' : 'listitem';
      case 'dt': return 'term';
      case 'dd': return 'definition';
      case 'table': return 'table';
      case 'caption': return 'caption';
      case 'tr': return isPresentational(tableOf(el)) ? 'generic' : 'row';
      case 'td': return cellRole(el);
      case 'th': return isPresentational(tableOf(el)) ? 'generic' : headerRole(el);
      case 'thead': case 'tbody': case 'tfoot': return 'rowgroup';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'article': return 'article';
      case 'search': return 'search';
      case 'header': return inSectioning(el, SECTIONING) ? 'generic' : 'banner';
      case 'footer': return inSectioning(el, SECTIONING) ? 'generic' : 'contentinfo';
      case 'aside': return inSectioning(el, ASIDE_SCOPE) && !hasNameAttr(el) ? 'generic' : 'complementary';
      case 'section': return hasNameAttr(el) && nameOf(el, 'region', tag, true, false) !== '' ? 'region' : 'generic';
      case 'form': return hasNameAttr(el) && nameOf(el, 'form', tag, true, false) !== '' ? 'form' : 'generic';
      case 'dialog': return 'dialog';
      case 'summary': return isDetailsSummary(el) ? 'button' : 'generic';
      case 'p': return 'paragraph';
      case 'hr': return 'separator';
      case 'progress': return 'progressbar';
      case 'meter': return 'meter';
      case 'output': return 'status';
      case 'blockquote': return 'blockquote';
      case 'figure': return 'figure';
      case 'iframe': case 'frame': return 'iframe';
      case 'math': return 'math';
    }
    return 'generic';
  }
  // SVG-AAM as Chromium applies it. An svg is one image unless it draws
  // widgets; then, unnamed, it is only their wrapper. Inside, groups and
  // shapes count when named (or focusable), links when they have an href.
  const SVG_SHAPES = setOf('circle ellipse line path polygon polyline rect use');
  function svgRole(el, tag) {
    if (tag === 'svg') return svgWidgets(el) && nameOf(el, 'img', tag, false, false) === '' ? 'generic' : 'img';
    if (tag === 'a') return hasAttr(el, 'href') || hasAttr(el, 'xlink:href') ? 'link' : 'generic';
    if (tag !== 'g' && tag !== 'image' && SVG_SHAPES[tag] !== true) return 'generic';
    if (!hasNameAttr(el) && nativeName(el, tag, false, false) === '' && (tag === 'g' || !hasAttr(el, 'tabindex'))) return 'generic';
    return tag === 'g' ? 'group' : tag === 'image' ? 'img' : 'graphics-symbol';
  }
  // An svg that draws widgets (ARIA roles, focusable parts, links, HTML in a
  // foreignObject) is walked; any other svg stays one image.
  const SVG_WIDGETS = '[role]:not([role=none]):not([role=presentation]),[tabindex],a,foreignObject';
  function svgWidgets(el) {
    let w = mapGet(svgCache, el);
    if (w === undefined) { w = elQuery(el, SVG_WIDGETS) !== null; mapSet(svgCache, el, w); }
    return w;
  }
  const svgLeaf = (el, tag, isHTML) => !isHTML && tag === 'svg' && !svgWidgets(el);
  function inputRole(el) {
    const list = hasAttr(el, 'list');
    switch (inputType(el)) {
      case 'button': case 'submit': case 'reset': case 'image': case 'file': return 'button';
      case 'checkbox': return 'checkbox';
      case 'radio': return 'radio';
      case 'range': return 'slider';
      case 'number': return 'spinbutton';
      case 'search': return list ? 'combobox' : 'searchbox';
      case 'text': case 'email': case 'tel': case 'url': return list ? 'combobox' : 'textbox';
    }
    return 'textbox'; // password, date/time, color...
  }
  function tableOf(el) {
    let p = parentElement(el);
    for (let i = 0; p && i < 3; i++, p = parentElement(p)) if (localName(p) === 'table') return p;
    return null;
  }
  // role=none on a table or list (layout tables, menus) takes its rows,
  // cells and items along with it.
  function isPresentational(el) {
    if (!el) return false;
    const r = explicitRole(el);
    return r === 'none' || r === 'presentation';
  }
  function cellRole(el) {
    const t = tableOf(el);
    const r = t ? explicitRole(t) : '';
    return r === 'grid' || r === 'treegrid' ? 'gridcell' : r === 'none' || r === 'presentation' ? 'generic' : 'cell';
  }
  // th without scope: a header in a row that also holds data cells heads that row.
  function headerRole(el) {
    const scope = strLower(getAttr(el, 'scope') || '');
    if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
    if (scope === 'col' || scope === 'colgroup') return 'columnheader';
    const row = parentElement(el), group = row && parentElement(row);
    if (group && localName(group) === 'thead') return 'columnheader';
    if (row) for (let c = firstChild(row); c; c = nextSibling(c)) {
      if (nodeType(c) === 1 && localName(c) === 'td') return 'rowheader';
    }
    return 'columnheader';
  }
  function isDetailsSummary(el) {
    const p = parentElement(el);
    if (!p || localName(p) !== 'details') return false;
    for (let c = firstChild(p); c; c = nextSibling(c)) {
      if (nodeType(c) === 1 && localName(c) === 'summary') return c === el;
    }
    return false;
  }

  // ---- Accessible names (accname 1.2, the parts real pages use) -------------
  // nameOf computes the name of an element being emitted; it also sets
  // nameFrom (content or not) and nameSourceEl (a legend or caption that
  // supplied the name, so the walk does not repeat its text).
  // deferContent: stop before name-from-content and report NF_DEFERRED; the
  // walk computes it only if the name will be kept (see walkElement).
  function nameOf(el, role, tag, isHTML, deferContent) {
    nameSourceEl = null;
    let s;
    const attrs = hasAttributes(el);
    if (attrs) {
      const lb = getAttr(el, 'aria-labelledby');
      if (lb !== null && (s = labelledByText(el, lb, 0))) { nameFrom = NF_OTHER; return s; }
      if ((s = clean(getAttr(el, 'aria-label')))) { nameFrom = NF_OTHER; return s; }
    }
    if ((s = nativeName(el, tag, isHTML, true))) { nameFrom = NF_OTHER; return s; }
    nameSourceEl = null;
    if (NAME_FROM_CONTENT[role] === true) {
      if (deferContent) { nameFrom = NF_DEFERRED; return ''; }
      if ((s = clean(contentText(el, null, false, false, 0)))) { nameFrom = NF_CONTENT; return s; }
    }
    if (!attrs) { nameFrom = NF_NONE; return ''; }
    if ((s = clean(getAttr(el, 'title')))) { nameFrom = NF_OTHER; return s; }
    if (isHTML && (tag === 'input' || tag === 'textarea')) s = clean(getAttr(el, 'placeholder'));
    else if (role === 'textbox' || role === 'searchbox') s = clean(getAttr(el, 'aria-placeholder'));
    nameFrom = s ? NF_OTHER : NF_NONE;
    return s || '';
  }
  function labelledByText(el, ids, depth) {
    const list = words(ids);
    const root = getRootNode(el);
    const rt = nodeType(root);
    let out = '';
    for (let i = 0; i < list.length; i++) {
      const t = rt === 9 ? docById(root, list[i]) : rt === 11 ? fragById(root, list[i]) : null;
      if (!t) continue;
      // A hidden referenced element still names, including its hidden content.
      const s = clean(textAlt(t, null, hiddenForName(t), true, depth + 1, true));
      if (s) out = out ? out + ' ' + s : s;
    }
    return out;
  }
  // Native markup names (HTML-AAM). useLabels is false inside recursion, which
  // also prevents label -> control -> label cycles.
  function nativeName(el, tag, isHTML, useLabels) {
    if (!isHTML) { // an svg element is named by its <title> child
      if (namespaceURI(el) !== SVG_NS) return '';
      for (let c = firstChild(el); c; c = nextSibling(c)) {
        if (nodeType(c) === 1 && localName(c) === 'title') return clean(contentText(c, null, true, false, 0));
      }
      return '';
    }
    let s = '';
    if (useLabels && LABELABLE[tag] === true && (tag !== 'input' || inputType(el) !== 'hidden')) {
      if ((s = labelsText(el))) return s;
    }
    switch (tag) {
      case 'input': {
        const t = inputType(el);
        if (t === 'button' || t === 'submit' || t === 'reset') {
          s = getAttr(el, 'value');
          return s ? clean(s) || s : t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '';
        }
        if (t === 'image') {
          return clean(getAttr(el, 'alt')) || clean(getAttr(el, 'value')) || clean(getAttr(el, 'title')) || 'Submit';
        }
        return '';
      }
      case 'img': case 'area': return clean(getAttr(el, 'alt'));
      case 'option': return clean(optionLabel(el));
      case 'optgroup': return clean(getAttr(el, 'label'));
      case 'fieldset': return childNameSource(el, 'legend');
      case 'table': return childNameSource(el, 'caption');
    }
    return '';
  }
  // Name from a child element (legend, caption); remembers it.
  function childNameSource(el, childTag) {
    let found = null;
    for (let c = firstChild(el); c; c = nextSibling(c)) {
      if (nodeType(c) === 1 && localName(c) === childTag) { found = c; break; }
    }
    if (!found) return '';
    const s = clean(contentText(found, null, false, false, 0));
    if (s) nameSourceEl = found;
    return s;
  }
  // The labels of a control. Not el.labels: Chromium's live LabelsNodeList
  // scans the whole document on first use, which made big forms quadratic.
  function labelsOf(el) {
    const found = [];
    const root = getRootNode(el), rt = nodeType(root);
    const id = getAttr(el, 'id');
    if (id && (rt === 9 || rt === 11)) {
      let idx = mapGet(labelIndex, root);
      if (idx === undefined) { // label[for] by id, built once per pass and tree scope
        idx = new MapC();
        const all = rt === 9 ? docQueryAll(root, 'label[for]') : fragQueryAll(root, 'label[for]');
        for (let i = 0, n = nlLength(all); i < n; i++) {
          const l = nlItem(all, i), k = getAttr(l, 'for');
          const a = mapGet(idx, k);
          if (a === undefined) mapSet(idx, k, [l]); else a[a.length] = l;
        }
        mapSet(labelIndex, root, idx);
      }
      const a = mapGet(idx, id);
      if (a !== undefined && (rt === 9 ? docById(root, id) : fragById(root, id)) === el) {
        for (let i = 0; i < a.length; i++) found[found.length] = a[i];
      }
    }
    // A wrapping label without for= labels its first labelable descendant.
    for (let p = parentElement(el); p; p = parentElement(p)) {
      if (localName(p) !== 'label' || namespaceURI(p) !== HTML_NS) continue;
      if (!hasAttr(p, 'for') && elQuery(p, LABELABLE_SELECTOR) === el) {
        // keep tree order when there are also label[for]s
        let at = found.length;
        while (at > 0 && (comparePosition(found[at - 1], p) & 2) !== 0) at--;
        for (let i = found.length; i > at; i--) found[i] = found[i - 1];
        found[at] = p;
      }
      break;
    }
    return found;
  }
  function labelsText(el) {
    const list = labelsOf(el);
    let out = '';
    for (let i = 0; i < list.length; i++) {
      const lab = list[i];
      // A hidden label does not name (as in Chromium); inside a wrapping
      // label the control itself is skipped.
      if (hiddenForName(lab)) continue;
      // The label's own name (aria-label first), as accname computes it.
      const s = clean(textAlt(lab, el, false, false, 0, true));
      if (s) out = out ? out + ' ' + s : s;
    }
    return out;
  }
  // Text alternative of an element met while recursing (accname steps 2A-2I).
  // direct: el is itself referenced by aria-labelledby (its content always counts).
  function textAlt(el, skip, includeHidden, inLabelledBy, depth, direct) {
    if (el === skip || depth > NAME_DEPTH) return '';
    overTime(); // a name can span a large subtree
    const tag = localName(el);
    if (SKIP_TAGS[tag] === true) return '';
    const isHTML = namespaceURI(el) === HTML_NS;
    if (isHTML && tag === 'input' && inputType(el) === 'hidden') return '';
    if (!includeHidden && hiddenForName(el)) return '';
    let s;
    if (!inLabelledBy) {
      const lb = getAttr(el, 'aria-labelledby');
      if (lb !== null && (s = labelledByText(el, lb, depth))) return s;
    }
    const role = roleOf(el, tag, isHTML);
    // 2E: an embedded control contributes its value, not its label.
    if (EMBEDDED_TEXT[role] === true || RANGE[role] === true) {
      if (EMBEDDED_TEXT[role] === true && !(isHTML && (tag === 'input' || tag === 'textarea' || tag === 'select'))) {
        // custom textbox/combobox: its content is its value
        return contentText(el, skip, includeHidden, inLabelledBy, depth + 1);
      }
      return valueOf(el, tag, role, isHTML);
    }
    if ((s = clean(getAttr(el, 'aria-label')))) return s;
    if ((s = nativeName(el, tag, isHTML, false))) return s;
    if (role === 'none' || role === 'presentation') {
      if (tag === 'img') return '';
    }
    if (!(isHTML && LEAF_TAGS[tag] === true) && !svgLeaf(el, tag, isHTML) && (direct || NO_NAME_RECURSE[role] !== true)) {
      s = contentText(el, skip, includeHidden, inLabelledBy, depth + 1);
      if (strTrim(s)) return s;
    }
    return clean(getAttr(el, 'title'));
  }
  // Concatenated text of an element's flat-tree children: inline pieces join
  // as written, block-level pieces are separated by a space.
  function contentText(el, skip, includeHidden, inLabelledBy, depth) {
    if (depth > NAME_DEPTH) return '';
    let ownText = includeHidden ? 1 : 0; // 1 shown, -1 not, 0 not yet known
    const kids = flatChildren(el);
    const gen = genOf(el, true);
    let out = gen !== null ? gen[0] : '';
    for (let c = kids ? kids[0] : firstChild(el), i = 0; c; c = kids ? kids[++i] : nextSibling(c)) {
      const t = nodeType(c);
      if (t === 3) {
        if (ownText === 0) ownText = (styleInfo(el) & ST_INVISIBLE) === 0 && !skipsContent(el) ? 1 : -1;
        if (ownText === 1) out += collapse(charData(c));
      } else if (t === 1) {
        const s = textAlt(c, skip, includeHidden, inLabelledBy, depth + 1, false);
        if (s) out += localName(c) === 'br' || isBlock(c) ? ' ' + s + ' ' : s;
        else if (localName(c) === 'br') out += ' ';
      }
      if (out.length > NAME_SCAN) break;
    }
    return gen !== null ? out + gen[1] : out;
  }
  // Children in the flat tree as an array, or null meaning "the light DOM
  // children" (walked with firstChild/nextSibling to avoid copying).
  function flatChildren(el) {
    const sr = shadowOf(el);
    if (sr) {
      genScope(sr);
      watchRoot(sr);
      const a = [];
      for (let c = firstChild(sr); c; c = nextSibling(c)) a[a.length] = c;
      return a;
    }
    if (assignedNodes && localName(el) === 'slot') {
      const a = assignedNodes(el, { flatten: true });
      if (a.length) return a;
    }
    return null;
  }

  // CSS generated text (::before/::after content), part of names and of the
  // text shown, as in Chromium. Reading a pseudo-element's style costs
  // several times walking an element, so only the candidates are read: the
  // elements that some style rule setting content to text may select, found
  // once per pass and tree scope by scanning its style sheets. When a sheet
  // cannot be read (cross-origin) or selects too widely, names read the
  // elements they hold up to a budget; the text shown keeps to the candidates.
  let genCands = null;   // Set of candidate elements; null until the document is scanned
  let genScopes = null;  // Set of scanned tree scopes
  let genBlind = false;  // a sheet, or part of one, could not be read
  let genCache = null;   // Map(Element -> [before, after] | null)
  let genBudget = 0;     // rules left to scan in this pass
  let genReads = 0, genBlindReads = 0; // elements left to read, candidates or not
  // A read costs several times an element's walk, hence the budgets (a
  // bullet drawn by CSS before each of thousands of list items).
  const GEN_MAX_RULES = 20000, GEN_MAX_NESTING = 16, GEN_MAX_SELECTORS = 200;
  const GEN_MAX_READS = 3000, GEN_MAX_BLIND_READS = 400;
  function genPass() {
    genCands = genScopes = genCache = null;
    genBlind = false;
    genBudget = GEN_MAX_RULES;
    genReads = GEN_MAX_READS;
    genBlindReads = GEN_MAX_BLIND_READS;
  }
  // Scans a document or shadow root once per pass.
  function genScope(root) {
    if (genCands === null) {
      genCands = new SetC();
      genScopes = new SetC();
      genCache = new MapC();
      if (root !== doc) genScope(doc);
    }
    if (setHas(genScopes, root)) return;
    setAdd(genScopes, root);
    const sels = [];
    const isDoc = root === doc;
    try {
      const list = isDoc ? docSheets(root) : rootSheets(root);
      for (let i = 0, n = sheetsLength(list); i < n; i++) genSheet(sheetsItem(list, i), sels);
      const adopted = isDoc ? (docAdopted ? docAdopted(root) : null) : (rootAdopted ? rootAdopted(root) : null);
      if (adopted) for (let i = 0, n = adopted.length; i < n; i++) genSheet(adopted[i], sels);
    } catch (e) { genBlind = true; }
    if (sels.length === 0) return;
    // Matching is paid per element and selector: past a few hundred
    // selectors names read every element instead.
    if (sels.length > GEN_MAX_SELECTORS) { genBlind = true; return; }
    const query = isDoc ? docQueryAll : fragQueryAll;
    let all = '';
    for (let i = 0; i < sels.length; i++) all += (i ? ',' : '') + sels[i];
    try { genAdd(query(root, all)); } catch (e) {
      for (let i = 0; i < sels.length; i++) { try { genAdd(query(root, sels[i])); } catch (e2) { /* not a selector once stripped */ } }
    }
    if (!isDoc) for (let i = 0; i < sels.length; i++) {
      if (strIndexOf(sels[i], ':host') >= 0) { try { setAdd(genCands, shadowHost(root)); } catch (e) { /* not a shadow root */ } break; }
    }
  }
  function genAdd(list) {
    for (let i = 0, n = nlLength(list); i < n; i++) setAdd(genCands, nlItem(list, i));
  }
  function genSheet(sheet, sels) {
    let rules;
    try { rules = sheetRules(sheet); } catch (e) { genBlind = true; return; } // cross-origin
    if (rules) genRules(rules, '', sels, 0);
  }
  function genRules(rules, parent, sels, depth) {
    if (depth > GEN_MAX_NESTING) { genBlind = true; return; }
    for (let i = 0, n = ruleListLength(rules); i < n; i++) {
      if (--genBudget < 0) { genBlind = true; return; }
      const r = ruleListItem(rules, i), t = ruleType(r);
      if (t === 1) { // style rule, maybe with nested rules
        // content first: reading a selector costs more, and few rules set content
        const worth = contentWorth(cssValue(ruleStyle(r), 'content'));
        const kids = styleRuleKids ? styleRuleKids(r) : null;
        const nested = kids !== null && ruleListLength(kids) > 0;
        if (!worth && !nested) continue;
        let sel = selectorText(r);
        if (parent !== '') sel = nestedSelector(sel, parent);
        const low = strLower(sel);
        if (worth && (strIndexOf(low, ':before') >= 0 || strIndexOf(low, ':after') >= 0)) sels[sels.length] = stripPseudo(sel);
        if (nested) genRules(kids, sel, sels, depth + 1);
      } else if (t === 3) { // @import
        const s = importSheet(r);
        if (s) genSheet(s, sels);
      } else if (t === 4 || t === 12 || t === 0) { // @media, @supports, @layer, @container, @scope
        let kids = null;
        try { kids = groupRules(r); } catch (e) { kids = null; } // not a grouping rule
        if (kids) genRules(kids, parent, sels, depth + 1);
      }
    }
  }
  // A nested rule's selector with its parent's put in (CSS nesting).
  function nestedSelector(sel, parent) {
    let out = '', found = false;
    for (let i = 0; i < sel.length; i++) {
      if (charCodeAt(sel, i) === 38) { out += ':is(' + parent + ')'; found = true; } else out += strSlice(sel, i, i + 1);
    }
    return found ? out : ':is(' + parent + ') ' + sel;
  }
  // The selector of the elements whose pseudo-elements sel selects.
  const PSEUDO_NAMES = ['::before', '::after', ':before', ':after'];
  function stripPseudo(sel) {
    let out = '';
    for (let i = 0, n = sel.length; i < n;) {
      let len = 0;
      if (charCodeAt(sel, i) === 58) {
        for (let k = 0; k < PSEUDO_NAMES.length && len === 0; k++) {
          const p = PSEUDO_NAMES[k];
          if (strLower(strSlice(sel, i, i + p.length)) === p) len = p.length;
        }
      }
      if (len === 0) { out += strSlice(sel, i, i + 1); i++; continue; }
      // "a ::before" and "::before" select every element's pseudo-element
      const last = out.length ? charCodeAt(out, out.length - 1) : 44;
      if (isWs(last) || last === 44 || last === 62 || last === 43 || last === 126 || last === 40) out += '*';
      i += len;
    }
    return out;
  }
  // Whether a rule's content value may give text: a string (not only icon
  // glyphs) or what only the computed style resolves (attr(), var()).
  function contentWorth(v) {
    if (v === '' || v === 'none' || v === 'normal') return false;
    return cssContentText(v) !== '' || contentOpaque;
  }
  // The text of a `content` value: its strings and quotes, or its alternative
  // text after a "/". Counters are not computed here, so a value using one
  // gives nothing. Private-use glyphs (icon fonts) are dropped.
  let contentOpaque = false; // side result: the value holds attr(), var() or a keyword to resolve
  function cssContentText(v) {
    let out = '', alt = -1, none = false;
    contentOpaque = false;
    for (let i = 0, n = v.length; i < n; i++) {
      let c = charCodeAt(v, i);
      if (c === 34 || c === 39) {
        const q = c;
        for (i++; i < n && (c = charCodeAt(v, i)) !== q; i++) {
          let ch = strSlice(v, i, i + 1);
          if (c === 92 && i + 1 < n) { // escape: \" \\ or hex code point
            let j = i + 1, h = 0;
            while (j < n && j < i + 7 && hexVal(charCodeAt(v, j)) >= 0) h = h * 16 + hexVal(charCodeAt(v, j++));
            if (j > i + 1) {
              if (j < n && charCodeAt(v, j) === 32) j++;
              c = h;
              ch = h === 10 ? ' ' : h > 0 && h <= 0x10ffff ? fromCodePoint(h) : '';
              i = j - 1;
            } else { c = charCodeAt(v, ++i); ch = strSlice(v, i, i + 1); }
          }
          if ((c >= 0xe000 && c <= 0xf8ff) || c >= 0xf0000) continue;
          if (c >= 0xdb80 && c <= 0xdbff) { i++; continue; } // high surrogate of a supplementary private-use glyph
          out += ch;
        }
      } else if (c === 47) { alt = out.length; } // "/": what follows is the alternative text
      else if (!isWs(c)) {
        let j = i;
        while (j < n && !isWs(charCodeAt(v, j)) && charCodeAt(v, j) !== 40 && charCodeAt(v, j) !== 47) j++;
        const word = strLower(strSlice(v, i, j));
        if (j < n && charCodeAt(v, j) === 40) { // a function: skip to its end
          let d = 0;
          for (; j < n; j++) { const k = charCodeAt(v, j); if (k === 40) d++; else if (k === 41 && --d === 0) break; }
          if (word === 'counter' || word === 'counters') none = true;
          else if (word === 'attr' || word === 'var' || word === 'env') contentOpaque = true;
          i = j;
          continue;
        }
        if (word === 'open-quote') out += '\u201c';
        else if (word === 'close-quote') out += '\u201d';
        else if (word !== 'no-open-quote' && word !== 'no-close-quote') contentOpaque = true; // inherit and the like
        i = j - 1;
      }
    }
    if (alt >= 0) return strSlice(out, alt);
    return none ? '' : out;
  }
  const hexVal = (c) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);
  // The generated text before and after el's content, or null. forName: a
  // name is being computed, which reads every element when a sheet was unreadable.
  function genOf(el, forName) {
    if (genCands === null) genScope(doc);
    const cand = setHas(genCands, el);
    if (!cand && !(forName && genBlind)) return null;
    let g = mapGet(genCache, el);
    if (g === undefined) {
      if (cand ? --genReads < 0 : --genBlindReads < 0) return null;
      const b = collapse(pseudoText(el, '::before')), a = collapse(pseudoText(el, '::after'));
      g = b === '' && a === '' ? null : [b, a];
      mapSet(genCache, el, g);
    }
    return g;
  }
  function pseudoText(el, which) {
    const cs = getCS(win, el, which);
    const v = cssValue(cs, 'content');
    if (v === '' || v === 'none' || v === 'normal') return '';
    const d = cssValue(cs, 'display');
    if (d === 'none' || invisibleStyle(cs)) return '';
    const s = cssContentText(v);
    return s !== '' && d !== 'contents' && strSlice(d, 0, 6) !== 'inline' ? ' ' + s + ' ' : s;
  }

  // ---- States and values ------------------------------------------------------
  function valueOf(el, tag, role, isHTML) {
    let v = '';
    if (isHTML && tag === 'input') {
      const t = inputType(el);
      if (NO_VALUE_INPUTS[t] === true) return '';
      v = inputValue(el);
      // Never echo a password; its length is enough to see that it was typed.
      if (t === 'password') { let m = ''; for (let i = 0; i < v.length && i < 64; i++) m += '\u2022'; v = m; }
    } else if (isHTML && tag === 'textarea') {
      v = textareaValue(el);
    } else if (isHTML && tag === 'select') {
      v = role === 'listbox' ? '' : selectedOptionText(el);
    } else if (RANGE[role] === true) {
      v = getAttr(el, 'aria-valuetext') || getAttr(el, 'aria-valuenow') ||
        (isHTML && (tag === 'progress' || tag === 'meter') ? getAttr(el, 'value') : '') || '';
    }
    return cap(v, MAX_VALUE);
  }
  function selectedOptionText(sel) {
    for (let c = firstChild(sel); c; c = nextSibling(c)) {
      if (nodeType(c) !== 1) continue;
      const t = localName(c);
      if (t === 'option') { if (optionSelected(c)) return clean(optionLabel(c)); }
      else if (t === 'optgroup') {
        for (let o = firstChild(c); o; o = nextSibling(o)) {
          if (nodeType(o) === 1 && localName(o) === 'option' && optionSelected(o)) return clean(optionLabel(o));
        }
      }
    }
    return '';
  }
  // Options of a native select. They have no layout box in a closed dropdown,
  // so only display is checked. Native options get no ref: the agent picks
  // them through the select's ref.
  function selectKids(sel, out) {
    for (let c = firstChild(sel); c && !overTime(); c = nextSibling(c)) {
      if (nodeType(c) !== 1) continue;
      const t = localName(c);
      if (t !== 'option' && t !== 'optgroup') continue;
      if (cssValue(styleOf(c), 'display') === 'none') continue;
      const name = cap(t === 'option' ? clean(optionLabel(c)) : clean(getAttr(c, 'label')), MAX_NAME);
      const n = { role: t === 'option' ? 'option' : 'group' };
      if (name) n.name = name;
      n.tag = t;
      if (matches(c, ':disabled')) n.disabled = true;
      if (t === 'option' && optionSelected(c)) n.selected = true;
      if (t === 'optgroup') {
        const kids = [];
        selectKids(c, kids);
        if (kids.length) n.children = kids;
      }
      out[out.length] = n;
    }
  }
  const noAttr = () => null;
  function ariaTri(attr, el, name) {
    const v = attr(el, name);
    if (v === null) return undefined;
    const l = strLower(strTrim(v));
    return l === 'true' ? true : l === 'mixed' ? 'mixed' : undefined;
  }
  // Adds state keys to node in the documented order.
  function addStates(node, el, tag, role, isHTML, aDisabled, widget, anyAttr) {
    const attr = anyAttr ? getAttr : noAttr; // skip lookups on attribute-less elements
    if (role === 'heading') {
      const lv = parseIntC(attr(el, 'aria-level'), 10);
      node.level = lv > 0 ? lv : isHTML && tag.length === 2 && tag[0] === 'h' ? parseIntC(tag[1], 10) : 2;
    }
    const inputT = isHTML && tag === 'input' ? inputType(el) : '';
    if (inputT === 'checkbox' || inputT === 'radio') {
      if (inputT === 'checkbox' && inputIndeterminate(el)) node.checked = 'mixed';
      else if (inputChecked(el)) node.checked = true;
    } else if (CHECKABLE[role] === true) {
      const c = ariaTri(attr, el, 'aria-checked');
      // mixed is only a state of checkboxes; a radio or switch reads it as false
      if (c !== undefined && (c === true || MIXED_OK[role] === true)) node.checked = c;
    }
    if (widget && ((isHTML && FORM_TAGS[tag] === true && matches(el, ':disabled')) || aDisabled)) node.disabled = true;
    const ex = attr(el, 'aria-expanded');
    if (ex !== null) {
      const l = strLower(strTrim(ex));
      if (l === 'true') node.expanded = true; else if (l === 'false') node.expanded = false;
    } else if (isHTML && tag === 'summary' && role === 'button') {
      node.expanded = detailsOpen(parentElement(el));
    }
    if (SELECTABLE[role] === true && isTrue(attr(el, 'aria-selected'))) node.selected = true;
    if (role === 'button') {
      const p = ariaTri(attr, el, 'aria-pressed');
      if (p !== undefined) node.pressed = p;
    }
    if (widget) {
      const formCtl = isHTML && (tag === 'input' || tag === 'select' || tag === 'textarea');
      if ((formCtl && attr(el, 'required') !== null) || isTrue(attr(el, 'aria-required'))) node.required = true;
      const inv = attr(el, 'aria-invalid');
      let invalid = inv !== null && inv !== '' && strLower(strTrim(inv)) !== 'false';
      if (!invalid && formCtl) { try { invalid = matches(el, ':user-invalid'); } catch (e) { invalid = false; } }
      if (invalid) node.invalid = true;
      if ((tag === 'textarea' && isHTML && textareaReadOnly(el)) ||
          (inputT !== '' && NO_VALUE_INPUTS[inputT] !== true && inputReadOnly(el)) ||
          isTrue(attr(el, 'aria-readonly'))) node.readonly = true;
    }
  }

  // ---- Refs -----------------------------------------------------------------
  function refFor(el) {
    let r = wmGet(refOf, el);
    if (r === undefined) {
      r = 'e' + nextRef++;
      wmSet(refOf, el, r);
      mapSet(refTarget, r, WeakRefC ? new WeakRefC(el) : el);
    }
    return r;
  }
  function lookup(ref) {
    if (typeof ref !== 'string' || !mapHas(refTarget, ref)) return undefined;
    const h = mapGet(refTarget, ref);
    return (WeakRefC ? deref(h) : h) || null;
  }
  function status(ref) {
    const el = lookup(ref);
    if (el === undefined) return 'unknown';
    return el && isConnected(el) && ownerDocument(el) === doc ? 'connected' : 'removed';
  }
  function element(ref) {
    return status(ref) === 'connected' ? lookup(ref) : null;
  }

  // Does the agent act on this element? (then it gets a ref)
  function isInteractive(el, tag, role, isHTML, anyAttr, pointerStart) {
    if (isHTML) {
      switch (tag) {
        case 'a': case 'area': if (hasAttr(el, 'href')) return true; break;
        case 'button': case 'select': case 'textarea': case 'input': case 'iframe': case 'frame': return true;
        case 'summary': if (role === 'button') return true; break;
        case 'option': return false; // native options: chosen through their select
        case 'body': case 'html': return false;
      }
    }
    if (INTERACTIVE[role] === true) return true;
    if (anyAttr) {
      const ti = getAttr(el, 'tabindex');
      if (ti !== null) {
        if (role === 'gridcell' || role === 'row') return true; // roving tabindex grids
        if (parseIntC(ti, 10) >= 0) return true;
      }
      if (hasAttr(el, 'onclick')) return true;
      if (isHTML) {
        const ce = getAttr(el, 'contenteditable');
        if (ce !== null && ce !== 'false' && isContentEditable(el)) {
          const p = parentElement(el); // only the editing host, not what is inside it
          if (!p || !isContentEditable(p)) return true;
        }
      }
    }
    if (isHTML && onclickOf(el) != null) return true;
    if (clickListened(el) && LISTENER_TARGETS[role] === true) return true;
    // cursor:pointer marks a click target; only the outermost element of a
    // pointer region gets the ref, not each descendant inheriting the cursor.
    return pointerStart;
  }

  // ---- The walk ---------------------------------------------------------------
  // Output nodes are appended to `out`; wrappers append their children to the
  // parent's `out` (hoisting). Text is merged as it is appended.
  // Whether a merged text ends with a space is remembered, not read: reading
  // the last character of a long concatenation copies it whole, once per
  // merge, which made pages with long runs of text quadratic.
  let textEnd = null; // Map(text node -> ends with a space), per pass
  function endsWithSpace(node) {
    const e = textEnd !== null ? mapGet(textEnd, node) : undefined;
    if (e !== undefined) return e;
    const t = node.text;
    return t.length > 0 && charCodeAt(t, t.length - 1) === 32;
  }
  const setTextEnd = (node, s) => { if (textEnd !== null) mapSet(textEnd, node, charCodeAt(s, s.length - 1) === 32); };
  function addText(out, s) {
    const n = out.length;
    if (n > 0) {
      const last = out[n - 1];
      if (last.role === 'text' && last.text !== DEEP_MARKER && last.sealed !== true) {
        if (charCodeAt(s, 0) === 32 && endsWithSpace(last)) s = strSlice(s, 1);
        if (s === '') return;
        last.text = last.text + s;
        setTextEnd(last, s);
        return;
      }
    }
    const node = { role: 'text', text: s };
    out[n] = node;
    setTextEnd(node, s);
  }
  const lastIsText = (out) => out.length > 0 && out[out.length - 1].role === 'text';
  // A block boundary: the next text must not glue onto the previous one.
  function addBreak(out) {
    const n = out.length;
    if (n === 0) return;
    const last = out[n - 1];
    if (last.role === 'text' && last.text !== DEEP_MARKER) {
      if (last.text.length && !endsWithSpace(last)) { last.text = last.text + ' '; setTextEnd(last, ' '); }
    }
  }
  // A label's text is its own: the text before it (a status message) and
  // after it do not run into it, though the label sits inline.
  function sealText(out) {
    const n = out.length;
    if (n > 0 && out[n - 1].role === 'text') out[n - 1].sealed = true;
  }
  // Trim merged text nodes and drop the empty ones, in place.
  function finishText(kids) {
    let w = 0;
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i];
      if (k.role === 'text') {
        if (k.sealed !== undefined) delete k.sealed;
        const t = strTrim(k.text);
        if (t === '') continue;
        k.text = t;
        if (textEnd !== null) mapSet(textEnd, k, false);
      }
      kids[w++] = k;
    }
    kids.length = w;
  }
  // True if every child is plain text or an image without ref or children:
  // content a name computed from content already states.
  function allLeafy(kids) {
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i];
      if (k.role !== 'text' && (k.role !== 'img' || k.ref !== undefined || k.children !== undefined)) return false;
    }
    return true;
  }

  // A table cell holding one element (a link, a button) keeps its name as
  // Chromium gives it: the cell, not only its content, is what sits at a row
  // and column.
  const CELLS = setOf('cell gridcell columnheader rowheader');
  const soleLeaf = (kids) => kids.length === 1 && kids[0].role !== 'text' &&
    (kids[0].ref !== undefined || kids[0].children === undefined);
  // Such a cell's name from content is its element's text alternative, which
  // the element's own name (or a field's value) already holds.
  function cellName(el, k) {
    const v = (EMBEDDED_TEXT[k.role] === true || RANGE[k.role] === true ? k.value : k.name) || '';
    const gen = v !== '' ? genOf(el, true) : null;
    return gen === null ? v : clean(gen[0] + v + gen[1]);
  }

  function hasRef(nodes) {
    for (let i = 0; i < nodes.length; i++) {
      if (nodes[i].ref !== undefined || (nodes[i].children !== undefined && hasRef(nodes[i].children))) return true;
    }
    return false;
  }

  function walkChildren(el, out, depth, pf, skipEl) {
    if (depth >= MAX_DEPTH) {
      out[out.length] = { role: 'text', text: DEEP_MARKER };
      return;
    }
    const kids = flatChildren(el);
    const gen = (pf & P_VISIBLE) !== 0 ? genOf(el, false) : null; // CSS generated text
    if (gen !== null && gen[0] !== '') addText(out, gen[0]);
    for (let c = kids ? kids[0] : firstChild(el), i = 0; c && !cut; c = kids ? kids[++i] : nextSibling(c)) {
      const t = nodeType(c);
      if (t === 1) {
        if (c !== skipEl) { walkElement(c, out, depth, pf, false); continue; }
        // The legend/caption that named the parent: drop it unless it holds
        // something to act on (e.g. a checkbox inside a legend).
        const tmp = [];
        walkElement(c, tmp, depth, pf, false);
        finishText(tmp);
        if (hasRef(tmp)) for (let j = 0; j < tmp.length; j++) out[out.length] = tmp[j];
      } else if (t === 3 && (pf & P_VISIBLE) !== 0) {
        const s = collapse(charData(c));
        // (a lone space only separates; no need to ask whether it renders)
        if (s !== '' && (s === ' ' || !skipsContent(el))) addText(out, s);
      }
    }
    if (gen !== null && gen[1] !== '') addText(out, gen[1]);
  }

  function walkElement(el, out, depth, pf, force) {
    if (cut || overTime()) return;
    const tag = localName(el);
    if (SKIP_TAGS[tag] === true) return;
    if ((pf & P_MODAL_OK) === 0) {
      if (el === modalEl) pf |= P_MODAL_OK;
      else if (!setHas(modalPath, el)) return;
    }
    const isHTML = namespaceURI(el) === HTML_NS;
    const anyAttr = hasAttributes(el);
    if (anyAttr) {
      if (isTrue(getAttr(el, 'aria-hidden')) || hasAttr(el, 'inert')) return;
      if ((pf & P_ADISABLED) === 0 && isTrue(getAttr(el, 'aria-disabled'))) pf |= P_ADISABLED;
    }
    if (isHTML && tag === 'input' && inputType(el) === 'hidden') return;
    const st = styleInfo(el);
    if ((st & ST_HIDDEN) !== 0) return;
    const visible = (st & ST_INVISIBLE) === 0;
    if (tag === 'br') { if (visible) addBreak(out); return; }
    let cf = pf & (P_ADISABLED | P_MODAL_OK);
    if (visible) cf |= P_VISIBLE;
    // Inside a native control a pointer cursor never marks a separate target,
    // so its cursor need not even be read.
    let pointer = false;
    if (isHTML && (tag === 'button' || tag === 'input' || tag === 'select' || tag === 'textarea' ||
        ((tag === 'a' || tag === 'area') && anyAttr && hasAttr(el, 'href')))) cf |= P_POINTER;
    else if ((pointer = isPointer(el))) cf |= P_POINTER;
    // visibility:hidden: the element itself is gone, but a descendant may set
    // visibility:visible again.
    if (!visible && !force) { walkChildren(el, out, depth + 1, cf, null); return; }

    const role = roleOf(el, tag, isHTML);
    const pointerStart = pointer && (pf & P_POINTER) === 0;
    const interactive = force || isInteractive(el, tag, role, isHTML, anyAttr, pointerStart);

    if (!interactive && HOIST[role] === true) {
      // A block wrapper separates the text around it; display is only read
      // when there is text to separate.
      const label = isHTML && tag === 'label';
      if (label) sealText(out);
      else if (lastIsText(out) && isBlock(el)) addBreak(out);
      if (!(isHTML && LEAF_TAGS[tag] === true) && !svgLeaf(el, tag, isHTML)) walkChildren(el, out, depth + 1, cf, null);
      if (label) sealText(out);
      else if (lastIsText(out) && isBlock(el)) addBreak(out);
      return;
    }

    if (role === 'iframe') {
      // Invisible frames (trackers, 0x0) are not worth expanding.
      const r = getRect(el);
      if (rectWidth(r) === 0 && rectHeight(r) === 0) return;
      const name = cap(nameOf(el, role, tag, isHTML, false), MAX_NAME);
      const n = { role: 'iframe' };
      if (name) n.name = name;
      n.ref = refFor(el);
      n.tag = tag;
      n.frame = true;
      out[out.length] = n;
      return;
    }

    // A container named from its content loses that name when its children
    // are kept (below), so that name is only computed when it can survive.
    let fullName = nameOf(el, role, tag, isHTML, !interactive);
    let nf = nameFrom;
    const skipEl = nameSourceEl;
    const value = valueOf(el, tag, role, isHTML);
    let kids = [];
    if (isHTML && tag === 'select') selectKids(el, kids);
    else if (!(isHTML && LEAF_TAGS[tag] === true) && !svgLeaf(el, tag, isHTML) &&
      (NO_CHILDREN_ROLES[role] !== true || (tag === 'svg' && !isHTML))) { // an svg image that draws widgets shows them
      walkChildren(el, kids, depth + 1, cf, skipEl);
      finishText(kids);
    }
    const walkedKids = kids.length > 0;
    if (nf === NF_DEFERRED) {
      if (!walkedKids || allLeafy(kids) || (anyAttr && hasAttr(el, 'title'))) {
        fullName = nameOf(el, role, tag, isHTML, false);
        nf = nameFrom;
      } else if (CELLS[role] === true && soleLeaf(kids)) {
        fullName = cellName(el, kids[0]);
        nf = NF_CONTENT;
      } else {
        fullName = '';
        nf = NF_NONE;
      }
    }
    let name = cap(fullName, MAX_NAME);
    if (walkedKids && name !== '') {
      const truncated = name !== fullName;
      // Say things once: drop children the name already states, or (for a
      // container named from its own content) drop the name the children state.
      if (!truncated && (nf === NF_CONTENT ? allLeafy(kids)
        : kids.length === 1 && kids[0].role === 'text' && kids[0].text === fullName)) kids = null;
      else if (nf === NF_CONTENT && !interactive && !(CELLS[role] === true && soleLeaf(kids))) name = '';
    }
    const hasKids = kids !== null && kids.length > 0;
    if (!interactive) {
      if (!hasKids && name === '' && value === '' && KEEP_EMPTY[role] !== true) return;
    } else if (!walkedKids && !force && !(isHTML && FORM_TAGS[tag] === true)) {
      // A click target with no content and no size is not really there
      // (a 0x0 box with overflowing children has walked children and is kept).
      const r = getRect(el);
      if (rectWidth(r) === 0 && rectHeight(r) === 0) return;
    }

    const node = { role: HOIST[role] === true ? 'generic' : role };
    if (name !== '') node.name = name;
    if (interactive) node.ref = refFor(el);
    node.tag = tag;
    addStates(node, el, tag, role, isHTML, (pf & P_ADISABLED) !== 0, interactive || INTERACTIVE[role] === true, anyAttr);
    if (value !== '') node.value = value;
    if (isHTML && (tag === 'a' || tag === 'area') && role === 'link') {
      const u = tag === 'a' ? anchorHref(el) : areaHref(el);
      if (u) node.url = cap(u, MAX_URL);
    }
    const ph = isHTML && (tag === 'input' || tag === 'textarea') ? clean(getAttr(el, 'placeholder'))
      : role === 'textbox' || role === 'searchbox' ? clean(getAttr(el, 'aria-placeholder')) : '';
    if (ph !== '' && ph !== name) node.placeholder = ph;
    if (hasKids) node.children = kids;
    out[out.length] = node;
  }

  // Flags a root element inherits from its ancestors, or -1 if an ancestor hides it.
  function ancestorFlags(el) {
    let pf = P_VISIBLE | (modalEl ? 0 : P_MODAL_OK);
    const p = flatParent(el);
    if (p && isPointer(p)) pf |= P_POINTER;
    for (let a = el; a; a = flatParent(a)) {
      if (a === modalEl) pf |= P_MODAL_OK;
      if (a === el) continue;
      if (isTrue(getAttr(a, 'aria-hidden')) || hasAttr(a, 'inert')) return -1;
      if (isTrue(getAttr(a, 'aria-disabled'))) pf |= P_ADISABLED;
    }
    return pf;
  }

  function snapshot(opts) {
    // Own properties only: a page-defined Object.prototype.root must not steer us.
    const own = (k) => (opts !== null && typeof opts === 'object' && hasOwn(opts, k) ? opts[k] : undefined);
    const start = own('nextRef');
    nextRef = typeof start === 'number' && start >= 1 ? start - (start % 1) : 1;
    const rootRef = own('root');
    const ms = own('timeBudgetMs'), abortMs = own('abortAfterMs');
    const now = perfNow();
    deadline = typeof ms === 'number' && ms > 0 ? now + ms : 0;
    abortAt = typeof abortMs === 'number' && abortMs > 0 ? now + abortMs : 0;
    visits = 0;
    cut = false;
    // Before the walk: what changes while it runs counts as a change.
    if (own('watch') === true && (rootRef === undefined || rootRef === null || rootRef === '')) startWatch();
    const tree = [];
    beginPass();
    textEnd = new MapC();
    let modal = false; // the walk read an open modal dialog alone
    try {
      if (rootRef !== undefined && rootRef !== null && rootRef !== '') {
        const st = status(rootRef);
        if (st !== 'connected') return { nextRef: nextRef, tree: tree, error: st };
        const el = lookup(rootRef);
        genScope(getRootNode(el)); // its shadow root, if any, was not met on the way
        const pf = ancestorFlags(el);
        if (pf >= 0) walkElement(el, tree, 0, pf, true);
      } else {
        const top = docBody(doc) || docElement(doc);
        if (top) {
          const st = styleInfo(top);
          if ((st & ST_HIDDEN) === 0) {
            modal = !!modalEl;
            let pf = modalEl ? 0 : P_MODAL_OK;
            if ((st & ST_INVISIBLE) === 0) pf |= P_VISIBLE;
            if (isPointer(top)) pf |= P_POINTER;
            walkChildren(top, tree, 1, pf, null);
          }
        }
      }
      finishText(tree);
    } catch (e) {
      if (e !== ABORT) throw e;
      return { nextRef: nextRef, tree: [], aborted: true };
    } finally {
      endPass();
      textEnd = null;
      deadline = abortAt = 0; // info() and cover() name elements with no limit
    }
    const r = { nextRef: nextRef, tree: tree };
    if (cut) r.cut = true;
    if (modal) r.modal = true;
    return r;
  }

  // ---- JSON -------------------------------------------------------------------
  // Hand-written so Object.prototype.toJSON or a replaced JSON.stringify on the
  // page cannot alter the result; node objects only hold own keys we set.
  function nodesJSON(nodes) {
    let s = '[';
    for (let i = 0; i < nodes.length; i++) {
      if (i) s += ',';
      const n = nodes[i], keys = objectKeys(n);
      s += '{';
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k], v = n[key];
        if (k) s += ',';
        s += '"' + key + '":';
        if (typeof v === 'string') s += jsonQuote(v);
        else if (typeof v === 'number' || typeof v === 'boolean') s += '' + v;
        else s += nodesJSON(v);
      }
      s += '}';
    }
    return s + ']';
  }
  // Native JSON.stringify is several times faster; it is used only while no
  // toJSON can be reached from our plain objects and arrays.
  const ObjectProto = Object.prototype, ArrayProto = Array.prototype, getProto = Object.getPrototypeOf;
  const nativeJSONSafe = () => getOwnDesc(ObjectProto, 'toJSON') === undefined &&
    getOwnDesc(ArrayProto, 'toJSON') === undefined && getProto(ArrayProto) === ObjectProto;
  function snapshotJSON(opts) {
    const r = snapshot(opts);
    if (nativeJSONSafe()) return jsonQuote(r);
    return '{"nextRef":' + r.nextRef + ',"tree":' + nodesJSON(r.tree) +
      (r.error ? ',"error":' + jsonQuote(r.error) : '') + (r.cut ? ',"cut":true' : '') +
      (r.aborted ? ',"aborted":true' : '') + (r.modal ? ',"modal":true' : '') + '}';
  }

  function info(ref) {
    const el = element(ref);
    return el ? describeEl(el) : null;
  }
  function describeEl(el) {
    beginPass();
    try {
      const tag = localName(el), isHTML = namespaceURI(el) === HTML_NS;
      const role = roleOf(el, tag, isHTML);
      return { role: HOIST[role] === true ? 'generic' : role, name: cap(nameOf(el, role, tag, isHTML, false), MAX_NAME), tag: tag };
    } finally {
      endPass();
    }
  }

  const innerTextOf = getterOf(HTMLElementP, 'innerText');
  // The first non-empty line of what el shows.
  function coverText(el) {
    let t = '';
    try { t = innerTextOf ? innerTextOf(el) : ''; } catch (e) { return ''; }
    let line = '';
    for (let i = 0; i < t.length; i++) {
      const ch = t[i];
      if (ch === '\n') { if (strTrim(line) !== '') break; line = ''; continue; }
      line += ch;
    }
    return strTrim(line);
  }

  // What covers the element of ref at its centre: the outermost element on
  // top that does not contain it (an overlay, a modal, a banner), with the
  // refs of what inside it can be acted on, so an error can name the way
  // out. Refs exist for elements a snapshot has seen.
  function cover(ref) {
    const el = element(ref);
    if (!el) return null;
    const r = getRect(el);
    const top = fromPoint(doc, rectLeft(r) + rectWidth(r) / 2, rectTop(r) + rectHeight(r) / 2);
    if (!top || top === el || nodeContains(el, top)) return null;
    let c = top;
    for (let p = parentElement(c); p && !nodeContains(p, el) && p !== docBody(doc); p = parentElement(p)) c = p;
    const out = { tag: localName(c), id: getAttr(c, 'id') || '', refs: [], controls: [] };
    // Name the overlay by itself, or by the dialog just inside it.
    let d = describeEl(c);
    for (let k = firstChild(c); k && d.role === 'generic'; k = nextSibling(k)) {
      if (nodeType(k) === 1) { const kd = describeEl(k); if (kd.role !== 'generic') d = kd; }
    }
    out.role = d.role; out.name = d.name;
    // A notice (a toast, a snackbar) is a live region: it goes by itself.
    // Its first line of text is what a wait for it to go can watch.
    const isLive = (n) => { const l = getAttr(n, 'aria-live'); const r = getAttr(n, 'role');
      return (l !== null && l !== 'off') || r === 'status' || r === 'alert' || r === 'log' || r === 'timer'; };
    out.live = isLive(c);
    for (let k = firstChild(c); k && !out.live; k = nextSibling(k)) if (nodeType(k) === 1 && isLive(k)) out.live = true;
    if (out.live) {
      const t = coverText(c);
      out.text = t ? cap(t, 80) : '';
    }
    const walk = (n) => {
      for (let k = firstChild(n); k; k = nextSibling(k)) {
        if (nodeType(k) !== 1) continue;
        const kr = wmGet(refOf, k);
        if (kr !== undefined && isConnected(k)) {
          const i = info(kr);
          if (i) out.refs[out.refs.length] = { ref: kr, role: i.role, name: i.name };
        } else if (out.controls.length < 20) {
          // Not seen by a snapshot yet (the overlay came after it): named
          // all the same, so a click can tell a closable overlay at once.
          const kd = describeEl(k);
          if (kd.role === 'button' || kd.role === 'link') out.controls[out.controls.length] = { role: kd.role, name: kd.name };
        }
        if (out.refs.length < 20) walk(k);
      }
    };
    walk(c);
    return out;
  }

  // The fields of the form whose submit control is ref that show as
  // invalid: marked aria-invalid by the page, or failing the browser's own
  // constraints when the form uses them (then the browser refused to send
  // it). Each comes with its ref (refs exist for elements a snapshot has
  // seen), role and name, the message the page ties to it
  // (aria-errormessage, aria-describedby, else the browser's), and what can
  // be chosen: a select's options, a radio group's radios.
  const elQueryAll = methodOf(ElementP, 'querySelectorAll');
  const formOfButton = getterOf(HTMLButtonElement.prototype, 'form'), formOfInput = getterOf(InputP, 'form');
  const formNoValidate = getterOf(HTMLFormElement.prototype, 'noValidate');
  const textOf = getterOf(NodeP, 'textContent');
  const optionValue = getterOf(HTMLOptionElement.prototype, 'value');
  const messageOf = (el) => {
    const p = localName(el) === 'select' ? HTMLSelectElement.prototype : localName(el) === 'textarea' ? HTMLTextAreaElement.prototype : InputP;
    const g = getterOf(p, 'validationMessage');
    try { return g ? g(el) : ''; } catch (e) { return ''; }
  };
  function idsText(el, attrName) {
    const v = getAttr(el, attrName);
    if (!v) return '';
    let s = '';
    const ids = words(v);
    for (let i = 0; i < ids.length; i++) {
      const t = ids[i] ? docById(doc, ids[i]) : null;
      if (t) s += ' ' + (textOf(t) || '');
    }
    return clean(s);
  }
  function shown(el) {
    if (checkVisibility) return checkVisibility(el);
    const r = getRect(el);
    return rectWidth(r) > 0 && rectHeight(r) > 0;
  }
  function invalid(ref) {
    const el = element(ref);
    if (!el || namespaceURI(el) !== HTML_NS) return null;
    const tag = localName(el);
    const type = strLower(getAttr(el, 'type') || '');
    let form = null;
    if (tag === 'button' && (type === '' || type === 'submit' || (type !== 'button' && type !== 'reset' && type !== 'menu'))) form = formOfButton(el);
    else if (tag === 'input' && (type === 'submit' || type === 'image')) form = formOfInput(el);
    if (!form) return null;
    const native = !formNoValidate(form) && !hasAttr(el, 'formnovalidate');
    const fields = [];
    const seen = new SetC();
    const all = elQueryAll(form, 'input, select, textarea, [aria-invalid]');
    for (let i = 0; i < nlLength(all) && fields.length < 10; i++) {
      const f = nlItem(all, i);
      const inv = getAttr(f, 'aria-invalid');
      const marked = inv !== null && inv !== '' && strLower(strTrim(inv)) !== 'false';
      let failing = false;
      if (!marked && native) { try { failing = matches(f, ':invalid'); } catch (e) { failing = false; } }
      if (!(marked || failing)) continue;
      const ft = localName(f) === 'input' ? strLower(getAttr(f, 'type') || 'text') : localName(f);
      const radioName = ft === 'radio' ? getAttr(f, 'name') || '' : '';
      if (radioName && setHas(seen, radioName)) continue;
      if (!shown(f) && ft !== 'checkbox' && ft !== 'radio') continue;
      const d = describeEl(f);
      const out = { ref: wmGet(refOf, f) || '', role: d.role, name: d.name, type: ft,
        message: cap(idsText(f, marked ? 'aria-errormessage' : '') || idsText(f, 'aria-describedby') || clean(messageOf(f)), MAX_NAME) };
      if (ft === 'checkbox') out.checked = !!inputChecked(f);
      if (ft === 'select') {
        out.options = [];
        const opts = elQueryAll(f, 'option');
        for (let j = 0; j < nlLength(opts) && j < 50; j++) {
          const o = nlItem(opts, j);
          out.options[out.options.length] = { label: clean(optionLabel(o)), value: optionValue(o), disabled: matches(o, ':disabled'), selected: !!optionSelected(o) };
        }
      }
      if (radioName) {
        setAdd(seen, radioName);
        out.radios = [];
        const group = elQueryAll(form, 'input[type=radio]');
        for (let j = 0; j < nlLength(group) && out.radios.length < 20; j++) {
          const r = nlItem(group, j);
          if (getAttr(r, 'name') !== radioName) continue;
          out.radios[out.radios.length] = { ref: wmGet(refOf, r) || '', name: describeEl(r).name, checked: !!inputChecked(r) };
        }
      }
      fields[fields.length] = out;
    }
    return fields;
  }

  // The control that submits the form of the field ref: the form's
  // default button (its first submit button, as Enter would press it),
  // when it is shown, enabled and has a ref. Null otherwise: a form with
  // no submit button, or a field in no form.
  const formOfSelect = getterOf(HTMLSelectElement.prototype, 'form'), formOfTextarea = getterOf(HTMLTextAreaElement.prototype, 'form');
  const closestOf = methodOf(ElementP, 'closest');
  function submitter(ref) {
    const el = element(ref);
    if (!el || namespaceURI(el) !== HTML_NS) return null;
    const tag = localName(el);
    let form = tag === 'input' ? formOfInput(el) : tag === 'select' ? formOfSelect(el) : tag === 'textarea' ? formOfTextarea(el) : null;
    if (!form && closestOf) form = closestOf(el, 'form');
    if (!form) return null;
    const all = elQueryAll(form, 'button, input[type=submit], input[type=image]');
    const others = []; // a form without a submit control: its plain buttons
    for (let i = 0; i < nlLength(all); i++) {
      const b = nlItem(all, i);
      if (localName(b) === 'button') {
        const type = strLower(getAttr(b, 'type') || '');
        if (formOfButton(b) !== form) continue;
        if (type === 'button') {
          const r = wmGet(refOf, b);
          if (r && others.length < 3 && !matches(b, ':disabled') && shown(b)) {
            const d = describeEl(b);
            others.push({ ref: r, role: d.role, name: d.name });
          }
          continue;
        }
        if (type === 'reset' || type === 'menu') continue;
      } else if (formOfInput(b) !== form) continue;
      // The first submit button is the default one, whatever its state.
      const r = wmGet(refOf, b);
      if (!r || matches(b, ':disabled') || !shown(b)) return null;
      const d = describeEl(b);
      return { ref: r, role: d.role, name: d.name };
    }
    return others.length ? { buttons: others } : null;
  }

  // The page's timings as the browser measured them: its navigation entry,
  // paints, largest contentful paint, layout shifts (CLS as the largest
  // session window: shifts less than 1 s apart, at most 5 s long) and long
  // tasks. Elements come as refs where a snapshot gave them one, else as
  // role and name. Asynchronous: buffered entries arrive on a callback.
  const PerfObs = typeof win.PerformanceObserver === 'function' ? win.PerformanceObserver : null;
  const perfOf = win.performance;
  const getEntriesByType = perfOf && typeof win.Performance === 'function' ? methodOf(win.Performance.prototype, 'getEntriesByType') : null;
  const setTimeoutC = win.setTimeout;
  const PromiseC = Promise;
  function who(el) {
    if (!el || nodeType(el) !== 1) return null;
    const r = wmGet(refOf, el);
    const d = describeEl(el);
    return { ref: r || '', role: d.role, name: d.name, tag: d.tag };
  }
  function perf() {
    return new PromiseC((resolve) => {
      const out = { paints: {}, lcp: null, shifts: [], long: [] };
      try {
        const nav = getEntriesByType ? getEntriesByType(perfOf, 'navigation')[0] : null;
        if (nav) {
          out.nav = { ttfb: nav.responseStart, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
            transfer: nav.transferSize, type: nav.type };
        }
        const paints = getEntriesByType ? getEntriesByType(perfOf, 'paint') : [];
        for (let i = 0; i < paints.length; i++) out.paints[paints[i].name] = paints[i].startTime;
      } catch (e) {}
      const observers = [];
      const watch = (type, f) => {
        if (!PerfObs) return;
        try {
          const po = new PerfObs((list) => { const es = list.getEntries(); for (let i = 0; i < es.length; i++) f(es[i]); });
          po.observe({ type: type, buffered: true });
          observers[observers.length] = po;
        } catch (e) {}
      };
      watch('largest-contentful-paint', (e) => { out.lcp = { time: e.startTime, size: e.size, el: who(e.element), url: e.url || '' }; });
      watch('layout-shift', (e) => {
        if (e.hadRecentInput) return;
        const srcs = [];
        const ss = e.sources || [];
        for (let i = 0; i < ss.length && i < 3; i++) { const w = who(ss[i].node); if (w) srcs[srcs.length] = w; }
        out.shifts[out.shifts.length] = { time: e.startTime, value: e.value, sources: srcs };
      });
      watch('longtask', (e) => { out.long[out.long.length] = { time: e.startTime, duration: e.duration }; });
      setTimeoutC(() => {
        for (let i = 0; i < observers.length; i++) { try { observers[i].disconnect(); } catch (e) {} }
        resolve(jsonQuote(out));
      }, 60);
    });
  }

  return { cover: cover, snapshot: snapshot, snapshotJSON: snapshotJSON, element: element, status: status, info: info,
    changed: changed, edits: edits, invalid: invalid, submitter: submitter, perf: perf };
}
