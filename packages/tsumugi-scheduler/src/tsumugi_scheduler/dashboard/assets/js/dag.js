/* global NODE_TERMINAL, attachPanZoom, childrenByParent, h, shownState, svg */
/* exported renderDag */

// A run's DAG as a hand-drawn SVG: the declared (root) nodes in layered columns left to right, a column per
// longest dependency chain, an edge per distinct dependency. dagLayout() is pure so the tests can check its
// numbers; renderDag() draws it, zoomable and pannable (pan_zoom.js). Runtime children (fan-out, spawn) are
// summarised on their parent's card.

const DAG = { width: 168, height: 54, colGap: 56, rowGap: 16, pad: 8 };

// Layer = 0 for a node without (known) dependencies, else 1 + the deepest dependency's layer. Within a
// column, layer 0 keeps stored order and later columns are sorted by the mean row of their dependencies
// (fewer crossings), ties by stored order.
// width: the cards' width (renderDag widens them to fit their longest label); DAG.width when left out.
function dagLayout(nodes, width = DAG.width) {
  const ids = new Set(nodes.map((n) => n.id));
  const roots = nodes
    .filter((n) => n.parent === null || n.parent === undefined || !ids.has(n.parent))
    .sort((a, b) => a.position - b.position);
  const rootIds = new Set(roots.map((n) => n.id));
  const deps = new Map(
    roots.map((n) => [n.id, [...new Set((n.after || []).filter((d) => rootIds.has(d) && d !== n.id))]]),
  );
  const layer = new Map();
  const layerOf = (id, seen) => {
    if (layer.has(id)) return layer.get(id);
    if (seen.has(id)) return 0; // a cycle cannot be declared; tolerate malformed data
    seen.add(id);
    const value = deps.get(id).length ? 1 + Math.max(...deps.get(id).map((d) => layerOf(d, seen))) : 0;
    layer.set(id, value);
    return value;
  };
  for (const node of roots) layerOf(node.id, new Set());
  const columns = [];
  for (const node of roots) (columns[layer.get(node.id)] ||= []).push(node);
  const row = new Map();
  columns.forEach((column, index) => {
    if (index > 0) {
      const mean = (n) => deps.get(n.id).reduce((sum, d) => sum + row.get(d), 0) / deps.get(n.id).length;
      column.sort((a, b) => mean(a) - mean(b) || a.position - b.position);
    }
    column.forEach((node, i) => row.set(node.id, i));
  });
  const boxes = roots.map((node) => ({
    id: node.id,
    layer: layer.get(node.id),
    row: row.get(node.id),
    x: DAG.pad + layer.get(node.id) * (width + DAG.colGap),
    y: DAG.pad + row.get(node.id) * (DAG.height + DAG.rowGap),
    width,
    height: DAG.height,
  }));
  const at = new Map(boxes.map((b) => [b.id, b]));
  const edges = [];
  for (const node of roots) {
    for (const dep of deps.get(node.id)) {
      const from = at.get(dep);
      const to = at.get(node.id);
      const [x1, y1, x2, y2] = [from.x + from.width, from.y + from.height / 2, to.x, to.y + to.height / 2];
      const mid = (x1 + x2) / 2;
      edges.push({ from: dep, to: node.id, d: `M${x1} ${y1} C${mid} ${y1} ${mid} ${y2} ${x2} ${y2}` });
    }
  }
  const cols = columns.length;
  const rows = Math.max(0, ...columns.map((c) => c.length));
  return {
    boxes,
    edges,
    width: cols ? 2 * DAG.pad + cols * width + (cols - 1) * DAG.colGap : 0,
    height: rows ? 2 * DAG.pad + rows * DAG.height + (rows - 1) * DAG.rowGap : 0,
  };
}

// SVG text neither wraps nor clips, so the cards are made wide enough for their longest line (issue 26: cut
// labels were unreadable), measured in the fonts the stylesheet gives .dag-id and .dag-sub.
const DAG_TEXT = { left: 14, right: 6 };
let dagMeasure = null;

function dagTextWidth(text, font) {
  dagMeasure ||= document.createElement('canvas').getContext('2d');
  if (!dagMeasure) return text.length * 8; // no canvas: a generous guess
  dagMeasure.font = font;
  return dagMeasure.measureText(text).width;
}

function dagLabels(node, kids) {
  const shown = shownState(node, kids);
  return { shown, id: node.id, sub: `${shown} \u00B7 ${dagCaption(node, kids)}` };
}

function dagCardWidth(labels) {
  const family = getComputedStyle(document.body).fontFamily;
  const idFont = '600 13px ui-monospace, SFMono-Regular, Menlo, monospace';
  const need = (text, font) => Math.ceil(DAG_TEXT.left + dagTextWidth(text, font) + DAG_TEXT.right);
  return Math.max(
    DAG.width,
    ...labels.map((l) => Math.max(need(l.id, idFont), need(l.sub, `11px ${family}`))),
  );
}

// The card's second line: what kind of node it is and how far along.
function dagCaption(node, kids) {
  if (node.child_run_id || node.binding === '') return 'subflow';
  if (kids.length) {
    const done = kids.filter((k) => NODE_TERMINAL.includes(k.state)).length;
    const ok = kids.filter((k) => k.state === 'COMPLETED').length;
    const tally = done < kids.length ? `${done}/${kids.length}` : `${ok}/${kids.length} ok`;
    return `${node.binding || 'fan-out'} \u00B7 ${tally}`;
  }
  return node.binding;
}

// ui: { selected: id|null, onSelect(id) }.
function renderDag(nodes, ui) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const children = childrenByParent(nodes);
  const labels = new Map(nodes.map((n) => [n.id, dagLabels(n, children.get(n.id) || [])]));
  const layout = dagLayout(nodes, dagCardWidth(dagLayout(nodes).boxes.map((b) => labels.get(b.id))));
  if (!layout.boxes.length) return h('p', { class: 'empty' }, 'No nodes.');
  const marker = svg(
    'defs',
    null,
    svg(
      'marker',
      {
        id: 'dag-arrow',
        viewBox: '0 0 8 8',
        refX: 8,
        refY: 4,
        markerWidth: 8,
        markerHeight: 8,
        orient: 'auto-start-reverse',
      },
      svg('path', { d: 'M0 0 L8 4 L0 8 z', class: 'dag-arrowhead' }),
    ),
  );
  const edges = layout.edges.map((e) =>
    svg('path', {
      d: e.d,
      class: 'dag-edge',
      'data-from': e.from,
      'data-to': e.to,
      'marker-end': 'url(#dag-arrow)',
    }),
  );
  const cards = layout.boxes.map((box) => {
    const node = byId.get(box.id);
    const label = labels.get(node.id);
    const shown = label.shown;
    const state = shown.toLowerCase();
    const select = () => ui.onSelect(node.id);
    return svg(
      'g',
      {
        class: `dag-node node-${state}${ui.selected === node.id ? ' selected' : ''}`,
        'data-node': node.id,
        transform: `translate(${box.x} ${box.y})`,
        tabindex: 0,
        role: 'button',
        'aria-label': `${node.id}: ${shown}`,
        onclick: select,
        onkeydown: (event) => {
          if (event.key === 'Enter' || event.key === ' ') {
            event.preventDefault();
            select();
          }
        },
      },
      svg('title', null, `${node.id}: ${shown}${node.error ? ` \u2014 ${node.error}` : ''}`),
      svg('rect', { width: box.width, height: box.height, rx: 8, class: 'dag-card' }),
      svg('rect', { width: 6, height: box.height, rx: 3, class: `dag-stripe bar-${state}` }),
      svg('text', { x: DAG_TEXT.left, y: 21, class: 'dag-id' }, label.id),
      svg('text', { x: DAG_TEXT.left, y: 41, class: 'dag-sub' }, label.sub),
    );
  });
  return dagViewport(layout, marker, edges, cards, ui.view || {});
}

// The picture in a clipped, focusable viewport under a bar of zoom controls (pan_zoom.js). view: the zoom and
// pan the caller keeps across redraws, so the auto-refresh does not lose them.
function dagViewport(layout, marker, edges, cards, view) {
  const layer = svg('g', { class: 'dag-layer' }, edges, cards);
  const button = (id, label, text) =>
    h('button', { type: 'button', id, class: 'dag-zoom', 'aria-label': label, title: label }, text);
  const buttons = {
    zoomOut: button('dag-zoom-out', 'Zoom out (\u2212)', '\u2212'),
    zoomIn: button('dag-zoom-in', 'Zoom in (+)', '+'),
    fit: button('dag-fit', 'Fit the whole graph (0)', 'Fit'),
  };
  const level = h('span', { id: 'dag-zoom-level', class: 'dag-level', title: 'Zoom level' }, '100%');
  const port = h(
    'div',
    {
      class: 'dag-viewport',
      id: 'dag-viewport',
      tabindex: 0,
      role: 'group',
      'aria-label': 'Run graph: drag to move, wheel or pinch to zoom; keys + \u2212 0 and arrows',
      'data-width': layout.width,
      'data-height': layout.height,
    },
    svg('svg', { id: 'run-dag', class: 'dag-svg' }, marker, layer),
  );
  const at = new Map(layout.boxes.map((b) => [b.id, b]));
  const boxOf = (el) => {
    const card = el.closest && el.closest('.dag-node[data-node]');
    return card ? at.get(card.dataset.node) || null : null;
  };
  attachPanZoom({ width: layout.width, height: layout.height }, { port, layer, level, buttons, boxOf }, view);
  return h(
    'div',
    { class: 'dag' },
    h(
      'div',
      { class: 'dag-tools' },
      buttons.zoomOut,
      level,
      buttons.zoomIn,
      buttons.fit,
      h('span', { class: 'dag-hint muted' }, 'Drag to move \u00B7 wheel or pinch to zoom'),
    ),
    port,
  );
}
