/**
 * Load at a fixed rate, for the bench's latency figures: requests start on a schedule evenly spaced in
 * time, and each latency counts from the request's scheduled start, so a stall of the server shows in
 * the figures instead of merely delaying the requests behind it (no coordinated omission).
 * autocannon's rate option sends each connection's quota for a second in one burst at the start of
 * the second, which measures latency under full load, not at the rate asked for.
 *
 * Usage: tsx scripts/pacedLoad.ts <url> <requests per second> <seconds> [header=value …]
 * Prints one JSON line; the first second warms the connections up and is not counted.
 */
import http from 'node:http';

const [url, rateText, secondsText, ...headerArguments] = process.argv.slice(2);
const rate = Number(rateText);
const seconds = Number(secondsText);
if (!url || !(rate > 0) || !(seconds > 1)) {
  console.error('usage: tsx scripts/pacedLoad.ts <url> <requests per second> <seconds, more than 1> [header=value …]');
  process.exit(2);
}
const headers = Object.fromEntries(headerArguments.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const warmUpMs = 1_000;
const total = Math.round(rate * seconds);

const latencies: number[] = [];
let sent = 0;
let inFlight = 0;
let non2xx = 0;
let errors = 0;
const started = performance.now();

function finish(scheduled: number, status: number | undefined) {
  inFlight -= 1;
  if (scheduled - started >= warmUpMs) {
    latencies.push(performance.now() - scheduled);
    if (status === undefined) errors += 1;
    else if (status < 200 || status >= 300) non2xx += 1;
  }
  if (sent === total && inFlight === 0) report();
}

function send(scheduled: number) {
  inFlight += 1;
  const request = http.request({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, headers, agent }, (response) => {
    response.resume();
    response.on('end', () => finish(scheduled, response.statusCode));
  });
  request.on('error', () => finish(scheduled, undefined));
  request.end();
}

const ticker = setInterval(() => {
  const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000));
  while (sent < due) {
    send(started + (sent * 1000) / rate);
    sent += 1;
  }
  if (sent === total) clearInterval(ticker);
}, 1);

function report() {
  latencies.sort((a, b) => a - b);
  const quantile = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(1));
  const measuredSeconds = (seconds * 1000 - warmUpMs) / 1000;
  console.log(
    JSON.stringify({
      requestsPerSecond: latencies.length / measuredSeconds,
      p50: quantile(0.5),
      p99: quantile(0.99),
      mean: latencies.reduce((sum, latency) => sum + latency, 0) / Math.max(1, latencies.length),
      non2xx: non2xx + errors,
    }),
  );
  agent.destroy();
}
