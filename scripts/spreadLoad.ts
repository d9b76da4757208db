/**
 * Closed-loop load like autocannon's command line, but each connection sends its requests to a path
 * of its own, for the bench's cost figures of a change: N connections changing one row measure how
 * long the row's lock is held (every request waits for the one before), not what a request costs.
 *
 * Usage: tsx scripts/spreadLoad.ts <origin> <method> <seconds> <body> <path,path,…> [header=value …]
 * One connection per path; prints autocannon's JSON report on one line.
 */
import autocannon from 'autocannon';

const [origin, method, secondsText, body, pathList, ...headerArguments] = process.argv.slice(2);
const paths = pathList?.split(',').filter(Boolean) ?? [];
if (!origin || !method || !(Number(secondsText) > 0) || body === undefined || paths.length === 0) {
  console.error('usage: tsx scripts/spreadLoad.ts <origin> <method> <seconds> <body> <path,path,…> [header=value …]');
  process.exit(2);
}
const headers = Object.fromEntries(headerArguments.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
let next = 0;
const result = await autocannon({
  url: origin,
  connections: paths.length,
  duration: Number(secondsText),
  requests: [
    {
      method: method as autocannon.Request['method'],
      headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
      ...(body ? { body } : {}),
      setupRequest: (request, context: { path?: string }) => {
        context.path ??= paths[next++ % paths.length];
        return { ...request, path: context.path! };
      },
    },
  ],
});
console.log(JSON.stringify(result));
