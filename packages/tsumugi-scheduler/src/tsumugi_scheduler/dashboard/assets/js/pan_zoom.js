/* exported attachPanZoom */

// Zoom and pan for a drawn picture (the run's DAG): a clipped viewport shows one <g> layer under a
// translate + scale transform, screen = picture * k + (x, y). The pzFit / pzZoomAt / pzClamp functions are
// pure (numbers in, numbers out) so the tests can check them; attachPanZoom wires them to the wheel, pointer
// (mouse, pen, touch: drag to pan, two fingers to pinch), keyboard and the +, −, Fit buttons. ADR-0096.

const PZ = { min: 0.2, max: 4, step: 1.25, pan: 48, margin: 48, drag: 4, minHeight: 140, maxHeight: 480 };

// The whole picture, centred, never enlarged past its natural size.
function pzFit(pic, port) {
  const k = Math.min(1, port.width / pic.width, port.height / pic.height);
  return { k, x: (port.width - pic.width * k) / 2, y: (port.height - pic.height * k) / 2 };
}

// 0.2x-4x, but always down to the fitted scale, so a very large picture can still be seen whole.
function pzLimits(pic, port) {
  return { min: Math.min(PZ.min, pzFit(pic, port).k), max: PZ.max };
}

// At least PZ.margin px of the picture (all of it when smaller) stays inside the viewport on each axis.
function pzClamp(view, pic, port) {
  const axis = (t, size, room) => {
    const keep = Math.min(PZ.margin, size, room);
    return Math.min(room - keep, Math.max(keep - size, t));
  };
  return {
    k: view.k,
    x: axis(view.x, pic.width * view.k, port.width),
    y: axis(view.y, pic.height * view.k, port.height),
  };
}

// Scale to k (within the limits) keeping the picture point under (px, py) where it is on screen.
function pzZoomAt(view, k, px, py, pic, port) {
  const { min, max } = pzLimits(pic, port);
  const next = Math.min(max, Math.max(min, k));
  const ratio = next / view.k;
  return pzClamp({ k: next, x: px - (px - view.x) * ratio, y: py - (py - view.y) * ratio }, pic, port);
}

// The viewport's height for its width: the picture's height at its fitted-to-width scale, between
// PZ.minHeight and PZ.maxHeight (or 70% of a short window, so a phone held sideways can still scroll past it).
function pzPortHeight(pic, width, windowHeight) {
  const natural = pic.height * Math.min(1, width / pic.width);
  const most = Math.max(PZ.minHeight, Math.min(PZ.maxHeight, windowHeight * 0.7));
  return Math.round(Math.min(most, Math.max(PZ.minHeight, natural)));
}

// A wheel step in pixels whatever the device reports (lines, pages); ctrl+wheel is a trackpad pinch, whose
// small deltas zoom faster.
function pzWheelFactor(event, pageHeight) {
  const pixels = event.deltaY * (event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? pageHeight : 1);
  return 2 ** (-pixels * (event.ctrlKey ? 0.01 : 0.002));
}

// parts: { port (the focusable clipping element), layer (the transformed <g>), level (the zoom read-out),
// buttons: { zoomIn, zoomOut, fit }, boxOf(el) -> the picture box of the item holding el (or null) }.
// state: kept by the caller across redraws (the auto-refresh rebuilds the elements): { k, x, y, fitted }.
// A new viewport for the same state takes over: a drag begun on the old elements carries on.
function attachPanZoom(pic, parts, state) {
  const { port, layer, level, buttons } = parts;
  let size = { width: 0, height: 0 };
  const ctl = { port };
  state.ctl = ctl;

  const show = () => {
    layer.setAttribute(
      'transform',
      `translate(${round2(state.x)} ${round2(state.y)}) scale(${+state.k.toPrecision(6)})`,
    );
    level.textContent = `${Math.round(state.k * 100)}%`;
    port.dataset.fitted = String(Boolean(state.fitted));
  };
  const set = (view, fitted = false) => {
    Object.assign(state, view, { fitted });
    show();
  };
  // The viewport's size, its height set from its width; read again before every action, so one that comes
  // before the resize observer has run (a click right after the window changed) uses the new size.
  const resize = () => {
    const width = port.clientWidth;
    if (!port.isConnected || !width) return false;
    const borders = port.offsetHeight - port.clientHeight;
    port.style.height = `${pzPortHeight(pic, width, window.innerHeight) + borders}px`;
    const changed = width !== size.width || port.clientHeight !== size.height;
    size = { width, height: port.clientHeight };
    return changed;
  };
  // A fitted view stays fitted as the viewport changes; a moved one stays put (within pzClamp).
  const measure = () => {
    if (!resize() && state.k !== undefined) return;
    if (!size.width) return;
    if (state.fitted || state.k === undefined) set(pzFit(pic, size), true);
    else set(pzClamp(state, pic, size));
  };
  const act =
    (fn) =>
    (...args) => {
      measure();
      if (size.width) fn(...args);
    };
  const fit = act(() => set(pzFit(pic, size), true));
  ctl.pan = act((dx, dy) => set(pzClamp({ k: state.k, x: state.x + dx, y: state.y + dy }, pic, size)));
  ctl.zoomAt = act((k, px, py) => set(pzZoomAt(state, k, px, py, pic, size)));
  ctl.local = (event) => {
    const rect = port.getBoundingClientRect();
    return { x: event.clientX - rect.left - port.clientLeft, y: event.clientY - rect.top - port.clientTop };
  };
  const zoomBy = act((factor) => ctl.zoomAt(state.k * factor, size.width / 2, size.height / 2));

  queueMicrotask(measure); // the caller inserts the element right after building it
  if (typeof ResizeObserver === 'function') {
    const observer = new ResizeObserver(() => {
      if (!port.isConnected) observer.disconnect();
      else measure();
    });
    observer.observe(port);
  }

  buttons.zoomIn.addEventListener('click', () => zoomBy(PZ.step));
  buttons.zoomOut.addEventListener('click', () => zoomBy(1 / PZ.step));
  buttons.fit.addEventListener('click', fit);
  port.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      const at = ctl.local(event);
      ctl.zoomAt(state.k * pzWheelFactor(event, size.height), at.x, at.y);
    },
    { passive: false },
  );
  // Safari reports a trackpad pinch as gesture events (scale since the gesture began), not as ctrl+wheel.
  let gestureK = 1;
  port.addEventListener('gesturestart', (event) => {
    event.preventDefault();
    gestureK = state.k;
  });
  port.addEventListener('gesturechange', (event) => {
    event.preventDefault();
    const at = ctl.local(event);
    ctl.zoomAt(gestureK * event.scale, at.x, at.y);
  });
  port.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return; // the browser's own zoom and shortcuts
    const step = PZ.pan * (event.shiftKey ? 4 : 1);
    const keys = {
      '+': () => zoomBy(PZ.step),
      '=': () => zoomBy(PZ.step),
      '-': () => zoomBy(1 / PZ.step),
      _: () => zoomBy(1 / PZ.step),
      0: fit,
      ArrowLeft: () => ctl.pan(step, 0),
      ArrowRight: () => ctl.pan(-step, 0),
      ArrowUp: () => ctl.pan(0, step),
      ArrowDown: () => ctl.pan(0, -step),
    };
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
  // A drag is no click: the click that ends it does not reach the node under the pointer.
  port.addEventListener(
    'click',
    (event) => {
      if (!state.dragged) return;
      event.stopPropagation();
      event.preventDefault();
    },
    true,
  );
  port.addEventListener('pointerdown', (event) => pzPointerDown(state, event));
  // Keyboard focus on an item out of view brings it into view (the clipping box never scrolls by itself).
  port.addEventListener(
    'focusin',
    act((event) => {
      const box = parts.boxOf(event.target);
      if (box && event.target.matches(':focus-visible')) set(pzReveal(state, box, size));
    }),
  );
}

function round2(value) {
  return Math.round(value * 100) / 100;
}

// The smallest pan that brings box (picture units) inside the viewport, 8 px in from its edges.
function pzReveal(view, box, port) {
  const axis = (t, start, length, room) => {
    const low = start * view.k + t;
    const high = low + length * view.k;
    if (low < 8) return t + 8 - low;
    if (high > room - 8) return t - Math.min(high - (room - 8), low - 8);
    return t;
  };
  return {
    k: view.k,
    x: axis(view.x, box.x, box.width, port.width),
    y: axis(view.y, box.y, box.height, port.height),
  };
}

// Pointers held on the picture live in the shared state, and the moves are followed on the window, so a
// redraw in the middle of a drag (auto-refresh) does not drop it. One pointer pans once it has moved
// PZ.drag px; two (touch) pinch around their midpoint.
function pzPointerDown(state, event) {
  if (event.pointerType === 'mouse' && event.button !== 0) return;
  // A primary pointer starts a gesture: no other pointer of its kind is down, whatever was missed before.
  if (event.isPrimary || !state.pointers) {
    state.pointers = new Map();
    state.dragged = false;
  }
  if (!state.following) {
    state.following = true;
    const move = (e) => pzPointerMove(state, e);
    const up = (e) => {
      state.pointers.delete(e.pointerId);
      if (state.pointers.size) return;
      state.following = false;
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      window.removeEventListener('pointercancel', up);
      if (state.ctl) state.ctl.port.classList.remove('dragging');
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
    window.addEventListener('pointercancel', up);
  }
  state.pointers.set(event.pointerId, {
    x: event.clientX,
    y: event.clientY,
    x0: event.clientX,
    y0: event.clientY,
  });
}

function pzPointerMove(state, event) {
  const held = state.pointers.get(event.pointerId);
  if (!held || !state.ctl) return;
  const pair = () => {
    const [a, b] = [...state.pointers.values()];
    return { d: Math.hypot(a.x - b.x, a.y - b.y), x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
  };
  const two = state.pointers.size >= 2;
  // Until the pointer has moved PZ.drag px from where it went down, nothing moves; then all of it counts.
  const before = two ? pair() : state.dragged ? { x: held.x, y: held.y } : { x: held.x0, y: held.y0 };
  Object.assign(held, { x: event.clientX, y: event.clientY });
  if (!state.dragged && !two && Math.hypot(held.x - held.x0, held.y - held.y0) < PZ.drag) return;
  state.dragged = true;
  state.ctl.port.classList.add('dragging');
  if (two) {
    // The picture point under the old midpoint scales about it, then follows the midpoint to where it is now.
    const after = pair();
    const at = state.ctl.local({ clientX: before.x, clientY: before.y });
    if (before.d > 0) state.ctl.zoomAt(state.k * (after.d / before.d), at.x, at.y);
    state.ctl.pan(after.x - before.x, after.y - before.y);
  } else {
    state.ctl.pan(held.x - before.x, held.y - before.y);
  }
}
