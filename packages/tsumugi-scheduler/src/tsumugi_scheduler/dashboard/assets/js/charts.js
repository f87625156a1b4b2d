/* global fmtTime, h, svg */
/* exported lineChart */

// Hand-written SVG line charts (ADR-0072): time on x with local-time labels, a value axis with its unit,
// grid lines, one line per series (gaps where a bucket has no value) and an HTML legend. No library: the page
// must stay one self-contained document.

const CHART_MARGIN = { left: 52, right: 14, top: 14, bottom: 30 };
const TIME_STEPS = [
  60e3,
  5 * 60e3,
  15 * 60e3,
  30 * 60e3,
  3600e3,
  3 * 3600e3,
  6 * 3600e3,
  12 * 3600e3,
  86400e3,
  2 * 86400e3,
  7 * 86400e3,
];

// A round step so that about `count` steps cover 0..max.
function niceStep(max, count, minStep) {
  const raw = Math.max(max / count, minStep || Number.MIN_VALUE);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const n = raw / magnitude;
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * magnitude;
}

function timeLabel(at, step) {
  const date = new Date(at);
  if (step >= 86400e3) return date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  // Midnight carries the date so a multi-day range stays readable.
  return date.getHours() === 0 && date.getMinutes() === 0 && step >= 3600e3
    ? date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })
    : time;
}

// Local-time aligned ticks (whole hours and days in the viewer's zone).
function timeTicks(start, end, width) {
  const most = Math.max(2, Math.floor(width / 90));
  const step = TIME_STEPS.find((s) => (end - start) / s <= most) || TIME_STEPS[TIME_STEPS.length - 1];
  const offset = new Date(start).getTimezoneOffset() * 60e3;
  const first = Math.ceil((start - offset) / step) * step + offset;
  const ticks = [];
  for (let at = first; at <= end; at += step) ticks.push(at);
  return { ticks, step };
}

/**
 * A line chart as an element: <figure class="chart-figure"> holding the SVG and its legend.
 * series: [{ name, color, points: [[at, value|null], ...] }]; yFormat renders axis values; yMin/yMax fix the
 * scale (the failure rate runs 0..100 %).
 * @param {{ id: string, title: string, unit: string, series: Array<{ name: string, color: string,
 *   points: Array<[number, number | null]> }>, start: number, end: number, width: number, height?: number,
 *   yFormat?: (v: number) => string, yMax?: number, minStep?: number }} chart
 */
function lineChart({
  id,
  title,
  unit,
  series,
  start,
  end,
  width,
  height = 200,
  yFormat = String,
  yMax,
  minStep,
}) {
  const inner = {
    w: width - CHART_MARGIN.left - CHART_MARGIN.right,
    h: height - CHART_MARGIN.top - CHART_MARGIN.bottom,
  };
  const values = series
    .flatMap((s) => s.points.map((p) => p[1]))
    .filter((v) => v !== null && v !== undefined);
  const peak = yMax !== undefined ? yMax : Math.max(0, ...values);
  const step = niceStep(peak || 1, 4, minStep);
  const top = yMax !== undefined ? yMax : Math.max(step, Math.ceil(peak / step) * step);
  const x = (at) => CHART_MARGIN.left + ((at - start) / Math.max(1, end - start)) * inner.w;
  const y = (v) => CHART_MARGIN.top + inner.h - (v / top) * inner.h;
  const grid = [];
  for (let v = 0; v <= top + step / 1e6; v += step) {
    grid.push(
      svg('line', {
        class: 'grid',
        x1: CHART_MARGIN.left,
        x2: CHART_MARGIN.left + inner.w,
        y1: y(v),
        y2: y(v),
      }),
      svg(
        'text',
        { class: 'y-label', x: CHART_MARGIN.left - 6, y: y(v) + 4, 'text-anchor': 'end' },
        yFormat(v),
      ),
    );
  }
  const { ticks, step: timeStep } = timeTicks(start, end, inner.w);
  const xAxis = ticks.map((at) => [
    svg('line', {
      class: 'tick',
      x1: x(at),
      x2: x(at),
      y1: CHART_MARGIN.top + inner.h,
      y2: CHART_MARGIN.top + inner.h + 4,
    }),
    svg(
      'text',
      { class: 'x-label', x: x(at), y: height - 10, 'text-anchor': 'middle' },
      timeLabel(at, timeStep),
    ),
  ]);
  const lines = series.map((s) => {
    const segments = [];
    let current = [];
    for (const [at, v] of s.points) {
      if (v === null || v === undefined) {
        if (current.length) segments.push(current);
        current = [];
        continue;
      }
      current.push([x(at), y(v), at, v]);
    }
    if (current.length) segments.push(current);
    return svg(
      'g',
      { class: 'series', 'data-series': s.name },
      segments.map((seg) =>
        svg('polyline', {
          points: seg.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' '),
          fill: 'none',
          stroke: s.color,
          'stroke-width': 2,
          'stroke-linejoin': 'round',
        }),
      ),
      segments
        .flat()
        .map(([px, py, at, v]) =>
          svg(
            'circle',
            { cx: px.toFixed(1), cy: py.toFixed(1), r: 2.5, fill: s.color },
            svg('title', null, `${s.name} at ${fmtTime(at)}: ${yFormat(v)}`),
          ),
        ),
    );
  });
  const chart = svg(
    'svg',
    {
      id,
      class: 'chart-svg',
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': `${title} (${unit})`,
    },
    grid,
    svg('line', {
      class: 'axis',
      x1: CHART_MARGIN.left,
      x2: CHART_MARGIN.left,
      y1: CHART_MARGIN.top,
      y2: CHART_MARGIN.top + inner.h,
    }),
    svg('line', {
      class: 'axis',
      x1: CHART_MARGIN.left,
      x2: CHART_MARGIN.left + inner.w,
      y1: CHART_MARGIN.top + inner.h,
      y2: CHART_MARGIN.top + inner.h,
    }),
    xAxis,
    lines,
  );
  const legend = h(
    'ul',
    { class: 'legend' },
    series.map((s) => h('li', null, h('span', { class: 'swatch', style: `background:${s.color}` }), s.name)),
  );
  return h(
    'figure',
    { class: 'chart-figure' },
    h('figcaption', null, h('strong', null, title), h('span', { class: 'muted' }, ` \u00b7 ${unit}`)),
    chart,
    legend,
  );
}
