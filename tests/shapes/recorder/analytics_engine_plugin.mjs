// A miniflare plugin that gives a Worker workerd's own Analytics Engine binding (miniflare's built-in one is
// a JavaScript stand-in whose writeDataPoint does nothing). workerd builds each event, refusing bad data
// points as the platform does, and posts it as JSON to the service named in the binding's options.
export const plugins = {
  "workerd-analytics-engine": {
    getBindings(bindings) {
      return (bindings ?? []).map((b) => ({ name: b.name, analyticsEngine: { name: `core:user:${b.options.service}` } }));
    },
    getNodeBindings() {
      return {};
    },
    getServices() {
      return [];
    },
  },
};
