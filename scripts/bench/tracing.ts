/** What OpenTelemetry tracing costs a request, off as production runs it without an endpoint, and on. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { pino } from 'pino';
import { createApp, type App } from '../../src/app.js';
import { createSecretBox } from '../../src/auth/secrets.js';
import { statementLog, type DatabaseOptions } from '../../src/db/connect.js';
import type { Database } from '../../src/db/database.js';
import { countStatementError, createMetrics } from '../../src/observability/metrics.js';
import { startTracing, type Tracing } from '../../src/observability/tracing.js';
import { atMost, autocannon, listen, loadPair, reported, seconds, type Check, type Result, type Target } from './harness.js';
import type { Stack } from './seed.js';

/**
 * The OTLP/HTTP sink of the tracing figures: a bare `node:http` server in a child process that answers
 * every export 200 and keeps nothing but the count of exports and of the spans in them.
 */
const spanSinkSource = String.raw`
const http = require('node:http');
let exports = 0, spans = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    exports += 1;
    spans += (Buffer.concat(chunks).toString('latin1').match(/"spanId"/g) ?? []).length;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
process.on('message', () => process.send({ exports, spans }));
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

async function startSpanSink() {
  const child = spawn(process.execPath, ['-e', spanSinkSource], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () => new Promise<{ port?: number; exports: number; spans: number }>((answered) => child.once('message', answered));
  const { port } = await next();
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    /** Exports and spans received so far. */
    counts: async () => {
      const answer = next();
      child.send({});
      return answer;
    },
    close: async () => {
      const exited = new Promise((done) => child.once('exit', done));
      child.disconnect();
      await exited;
    },
  };
}

export interface TracingStack extends Stack {
  /** Another handle on the stack's database, opened with `hooks` as src/server.ts opens its own. */
  open(hooks: DatabaseOptions): Promise<{ db: Kysely<Database>; close(): Promise<void> }>;
}

/**
 * Nanoseconds the off side's statement log adds to one statement, timed apart from the machine's
 * noise: Kysely with and without it over a driver that does nothing, so that the statement itself
 * costs nothing on either side; the median of alternating rounds.
 */
async function statementLogNanoseconds(options: DatabaseOptions): Promise<number> {
  const make = (hooks: DatabaseOptions) =>
    new Kysely<Database>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
      ...statementLog(hooks),
    });
  const bare = make({});
  const logged = make(options);
  const query = bare.selectFrom('users').selectAll().where('id', '=', 'a key').compile();
  const statements = 100_000;
  const time = async (db: Kysely<Database>) => {
    const start = process.hrtime.bigint();
    for (let index = 0; index < statements; index += 1) await db.executeQuery(query);
    return Number(process.hrtime.bigint() - start) / statements;
  };
  const added: number[] = [];
  for (let round = 0; round < 7; round += 1) {
    const without = await time(bare);
    const withLog = await time(logged);
    added.push(withLog - without);
  }
  await Promise.all([bare.destroy(), logged.destroy()]);
  return added.sort((x, y) => x - y)[Math.floor(added.length / 2)]!;
}

/**
 * What OpenTelemetry tracing (src/observability/tracing.ts) costs GET /v1/me, on one stack, each pair
 * A B B A as elsewhere:
 *   - off, as src/server.ts runs without OTEL_EXPORTER_OTLP_ENDPOINT (no SDK loaded; the database's
 *     statement log counting failed statements, the tracing hook unset) ÷ the app the other figures
 *     are measured with (a database without a statement log): reported. Kysely's statement log, which
 *     production runs for its error metrics whether tracing is on or not, is all that differs, so
 *     what off costs is that log's time per statement (timed over a driver that does nothing,
 *     `statementLogNanoseconds`) × the request's statements ÷ the server's CPU per request (this
 *     process's CPU over the pair): ≤ 1 %. The rate ratio alone cannot tell 1 % on a shared
 *     machine, whose noise between halves is several per cent;
 *   - on, every request's span and its statements' spans exported to a sink in a child process
 *     (answering 200, keeping nothing), ÷ off: reported, with the spans the sink received.
 * The traced app is made afresh before each of its halves and closed before the off side's: the
 * AsyncLocalStorage that carries its context puts a hook on every promise of the process (Node 20)
 * while it lives, which must not weigh on the other side.
 */
export async function benchTracing(stack: TracingStack, results: Result[]): Promise<Check[]> {
  const name = (what: string) => `${stack.label}: ${what}`;
  const headers = { authorization: `Bearer ${stack.world.readKey}` };
  const appOn = async (db: Kysely<Database>, tracing?: Tracing) =>
    createApp({
      db,
      config: { rateLimitPerMinute: 10_000_000, redisUrl: undefined },
      logger: pino({ level: 'silent' }),
      secrets: createSecretBox(randomBytes(32)),
      // Alike on every side: Node's own metrics once for the process, not once per app made.
      metrics: createMetrics({ processMetrics: false }),
      tracing,
      // No callers kept in memory: every request sends its key's lookup, so that the statement log
      // and the statement spans have a statement to pass, as for a caller read anew.
    });
  const sink = await startSpanSink();
  const counting = createMetrics({ processMetrics: false });
  const onError = (error: unknown) => countStatementError(counting, error);
  const offDatabase = await stack.open({ onError });
  let traced: { app: App; tracing: Tracing } | undefined;
  const onDatabase = await stack.open({ onError, onStatement: (event) => traced?.tracing.statement(event) });
  let counted = 0;
  const countedDatabase = await stack.open({ onStatement: () => (counted += 1) });
  const countedApp = await appOn(countedDatabase.db);
  // Each served as Express serves itself: the traced app changes between runs, so it is served through a
  // function, which the API's server would not give Express's prototypes at birth; so are the others, alike.
  const asExpressDoes = { asExpressDoes: true };
  const countedServer = await listen(countedApp.app, asExpressDoes);
  const baseline = await appOn(stack.db);
  const off = await appOn(offDatabase.db);
  const baselineServer = await listen(baseline.app, asExpressDoes);
  const offServer = await listen(off.app, asExpressDoes);
  const onServer = await listen((req: IncomingMessage, res: ServerResponse) => traced!.app.app(req, res), asExpressDoes);
  const stopTraced = async () => {
    await traced?.app.close();
    traced = undefined;
  };
  const startTraced = async () => {
    await stopTraced();
    const tracing = await startTracing({ url: sink.url }, pino({ level: 'silent' }));
    traced = { app: await appOn(onDatabase.db, tracing), tracing };
  };
  try {
    const target = (what: string, url: string, before?: () => Promise<void>): Target => ({ name: name(what), url: `${url}/v1/me`, ...(before ? { before } : {}) });
    // A second of load on each first, so that no side pays for a cold start.
    await startTraced();
    for (const server of [baselineServer, offServer, onServer]) await autocannon(`${server.url}/v1/me`, { headers, duration: 1 });
    await stopTraced();
    // The statements a request sends, each of which passes the statement log once.
    const probes = 20;
    for (let index = 0; index < probes; index += 1) await (await fetch(`${countedServer.url}/v1/me`, { headers })).arrayBuffer();
    const statementsPerRequest = counted / probes;
    const cpuBefore = process.cpuUsage();
    const [untraced, tracingOff] = await loadPair(
      target('GET /v1/me, no statement log (the other figures)', baselineServer.url),
      target('GET /v1/me, tracing off as the server runs it', offServer.url),
      headers,
    );
    // The servers run in this process and autocannon in a child: this process's CPU over the pair is the servers'.
    const cpu = process.cpuUsage(cpuBefore);
    const pairRequests = (untraced.requestsPerSecond + tracingOff.requestsPerSecond) * 2 * Math.max(1, Math.round(seconds / 2));
    const cpuPerRequestNs = ((cpu.user + cpu.system) * 1000) / pairRequests;
    const logNs = await statementLogNanoseconds({ onError });
    const offShare = (logNs * statementsPerRequest) / cpuPerRequestNs;
    console.log(
      `${name('  … what off adds, apart from noise').padEnd(58)} ${logNs.toFixed(0)} ns a statement × ${statementsPerRequest} of ${(cpuPerRequestNs / 1000).toFixed(0)} µs of server CPU a request`,
    );
    const before = await sink.counts();
    const [offAgain, tracingOn] = await loadPair(
      target('GET /v1/me, tracing off', offServer.url, stopTraced),
      target('GET /v1/me, tracing on, exporting to a local sink', onServer.url, startTraced),
      headers,
    );
    await stopTraced();
    const after = await sink.counts();
    const spans = after.spans - before.spans;
    // Each side ran two halves of the pair's length.
    const requests = tracingOn.requestsPerSecond * 2 * Math.max(1, Math.round(seconds / 2));
    console.log(
      `${name('  … spans received by the sink').padEnd(58)} ${spans.toLocaleString('en')} in ${(after.exports - before.exports).toLocaleString('en')} exports, ${(spans / requests).toFixed(2)} a request`,
    );
    results.push(untraced, tracingOff, offAgain, tracingOn);
    const rps = (result: Result) => result.requestsPerSecond;
    return [
      atMost(name("GET /v1/me, tracing off: its statement log's share of the CPU, %"), offShare * 100, 1, `${logNs.toFixed(0)} ns × ${statementsPerRequest} statements of ${(cpuPerRequestNs / 1000).toFixed(0)} µs a request`),
      reported(name('GET /v1/me, tracing off ÷ no statement log'), rps(tracingOff) / rps(untraced), `${rps(tracingOff).toFixed(0)} / ${rps(untraced).toFixed(0)} req/s, within the noise of the machine`),
      reported(name('GET /v1/me, tracing on ÷ off'), rps(tracingOn) / rps(offAgain), `${rps(tracingOn).toFixed(0)} / ${rps(offAgain).toFixed(0)} req/s, p99 ${tracingOn.p99} / ${offAgain.p99} ms; ${(spans / requests).toFixed(2)} spans a request exported`),
    ];
  } finally {
    await stopTraced();
    await onServer.close();
    await offServer.close();
    await baselineServer.close();
    await countedServer.close();
    await countedApp.close();
    await countedDatabase.close();
    await off.close();
    await baseline.close();
    await onDatabase.close();
    await offDatabase.close();
    await sink.close();
  }
}
