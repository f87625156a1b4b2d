// Sends one finding to the driver (a Node function behind the SINK service binding), keyed by name.
export async function report(sink, key, value) {
  const response = await sink.fetch("http://sink/report", {
    method: "POST",
    body: JSON.stringify({ key, value }),
  });
  if (!response.ok) throw new Error(`the driver refused report ${key}: ${response.status}`);
}
