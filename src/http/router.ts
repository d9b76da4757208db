/**
 * Routes /v1 requests to the handler of their operation, as the contract describes them: a route
 * table built from the contract's paths at start-up, 405 for a known path with another method, then
 * per request: media type, scope, body preparation and validation with openapi-backend's compiled
 * validators (Ajv 2020, all errors), the handler, and the response it returns.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import FindMyWay from 'find-my-way';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { OperationId } from '../api/operations.js';
import { bodyText, JsonText } from '../api/jsonText.js';
import { StreamBody } from '../api/streamBody.js';
import type { SecretBox } from '../auth/secrets.js';
import { scopeAllows, type Scope } from '../auth/scopes.js';
import type { Database } from '../db/database.js';
import { FormatError, InsufficientScope, MethodNotAllowed, NotFound, PayloadTooLarge, UnsupportedMediaType } from '../errors.js';
import { writesItsEvent, type HandlerMap, type PublicOperationId } from '../handlers/types.js';
import { lockResource } from '../db/queries/conditional.js';
import { inTransaction } from '../db/transaction.js';
import { traceparentOf } from '../observability/traceContext.js';
import { withEvents } from '../events/outbox.js';
import type { KnownLogEnd } from '../events/knownLogEnd.js';
import { logPositions } from '../events/positions.js';
import type { LiveStreams } from '../live/streams.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { answerSchema, etagOf, ifMatchOf, noneMatchHits, requireIfMatch, resourceReads } from './conditional.js';
import { deprecationsOf, tellDeprecation } from './deprecation.js';
import { errorAnswer } from './errorHandler.js';
import { fingerprintOf, idempotencyKeyOf, runIdempotent, type Outcome } from './idempotency.js';
import { maxBodyDepth, prepareBody, tooDeepAt } from './requestBody.js';
import { readCsvBody } from './csvRequest.js';
import { pageHeaders } from './securityHeaders.js';
import { integerTextIssues, nulCharacterIssues, validationError, type IntegerParameter } from './validation.js';

type AnyResult = { status: number; body: unknown; headers?: Record<string, string>; logOf?: string };
type AnyHandler = (request: unknown, context: unknown) => Promise<AnyResult>;

export interface Contract {
  api: OpenAPIBackend;
  operations: Operation[];
}

export async function loadContract(document: object): Promise<Contract> {
  // openapi-backend asks for a new Ajv for every validator it compiles, and a new Ajv compiles the
  // JSON Schema 2020-12 meta-schema on its first schema (about 40 ms of CPU, twice per operation):
  // one Ajv per set of options compiles it once.
  const ajvs = new Map<string, Ajv2020>();
  const api = new OpenAPIBackend({
    definition: structuredClone(document) as never,
    apiRoot: '/',
    // The definition check of openapi-backend only knows OpenAPI 3.0; Redocly lints the contract instead.
    quick: true,
    validate: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, verbose: true, strict: false },
    customizeAjv: (_default, options) => {
      const key = JSON.stringify(options);
      let ajv = ajvs.get(key);
      if (!ajv) {
        ajv = new Ajv2020({ ...options, allErrors: true, verbose: true, strict: false });
        addFormats.default(ajv, { mode: 'full' });
        ajvs.set(key, ajv);
      }
      return ajv as never;
    },
  });
  await api.init();
  const operations = api.getOperations();
  // A deprecation the contract cannot date stops the start here, before anything else has started.
  for (const operation of operations) deprecationsOf(operation);
  return { api, operations };
}

const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

function neededScope(operation: Operation): Scope | undefined {
  const requirement = operation.security?.[0] as Record<string, string[]> | undefined;
  return requirement?.apiKey?.[0] as Scope | undefined;
}

function integerParameters(operation: Operation): IntegerParameter[] {
  return (operation.parameters ?? []).flatMap((parameter) => {
    const { name, in: location, schema } = parameter as { name: string; in: string; schema?: { type?: unknown } };
    const isInteger = schema?.type === 'integer';
    return isInteger && (location === 'path' || location === 'query') ? [{ name, in: location }] : [];
  });
}

/** Query parameters that hold a list as one comma-separated text (`types=a,b`: `style: form`, `explode: false`). */
function listParameters(operation: Operation): string[] {
  return (operation.parameters ?? []).flatMap((parameter) => {
    const { name, in: location, explode, schema } = parameter as { name: string; in: string; explode?: boolean; schema?: { type?: unknown } };
    return location === 'query' && explode === false && schema?.type === 'array' ? [name] : [];
  });
}

/** The query with each list parameter split into its items, as the contract's array schema validates them. */
function splitLists(query: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  if (names.length === 0) return query;
  const split = { ...query };
  for (const name of names) {
    const value = split[name];
    if (value !== undefined) split[name] = (Array.isArray(value) ? value : [value]).flatMap((item) => String(item).split(','));
  }
  return split;
}

function hasBody(req: Request): boolean {
  return Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
}

/** Whether the operation's answer states the log position it reflects: its 200 declares `Log-Position`. */
function statesPosition(operation: Operation): boolean {
  const ok = operation.responses?.['200'] as { headers?: Record<string, unknown> } | undefined;
  return ok?.headers?.['Log-Position'] !== undefined;
}

function successMediaType(operation: Operation): string | undefined {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (status.startsWith('2') && 'content' in response && response.content) return Object.keys(response.content)[0];
  }
  return undefined;
}

const invalidJson = () =>
  new FormatError([{ origin: 'body', code: 'invalid_json', path: [], message: 'The request body is not valid JSON.' }], 'The request body is not valid JSON.');

const tooDeep = (path: string[]) =>
  new FormatError(
    [{ origin: 'body', code: 'too_deep', path, message: `Arrays and objects may nest at most ${maxBodyDepth} levels deep.` }],
    `The request body nests deeper than ${maxBodyDepth} levels.`,
  );

const parseJson = express.json({ limit: '64kb' });

/** The answer of a handler: its status, body and the headers of its own the contract declares (`Location`). */
const outcomeOf = (result: { status: number; body?: unknown; headers?: Record<string, string> }): Outcome => ({
  status: result.status,
  headers: { ...result.headers },
  body: result.status === 204 ? null : bodyText(result.body),
});

/**
 * A read's answer with its tag; 304 without a body when If-None-Match names that tag. The tag is
 * hashed from the text in one call (no Buffer of the body, no Hash object), once per text a handler
 * wrote (`written`, which keeps it), and Node writes the same text after its header in one write.
 */
function writeRead(req: Request, res: Response, outcome: Outcome, written?: JsonText<unknown>) {
  if (outcome.status === 200 && outcome.body !== null) {
    const tag = written ? (written.tag ??= etagOf(outcome.body)) : etagOf(outcome.body);
    res.setHeader('ETag', tag);
    if (noneMatchHits(req.headers['if-none-match'], tag)) {
      res.statusCode = 304;
      return void res.end();
    }
  }
  writeOutcome(res, outcome);
}

/**
 * What res.json() writes, without its per-request lookups of settings and media types. The body goes
 * to Node as text, never as bytes: Node then sends the header and the body in one write rather than
 * two, which cost a request some 20 µs of CPU (BENCH_ONLY=stages).
 */
function writeOutcome(res: Response, outcome: Outcome) {
  res.statusCode = outcome.status;
  for (const name in outcome.headers) res.setHeader(name, outcome.headers[name]!);
  if (outcome.body === null) return void res.end();
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(outcome.body));
  res.end(outcome.body);
}

/**
 * Reads a JSON body of at most 64 KB once the request has been authenticated and routed. A body
 * too large is refused at once (413); a body that is not valid JSON is remembered and reported as
 * a format error after the scope check, in the documented order of checks.
 */
function readBody(req: Request, res: Response, next: NextFunction) {
  parseJson(req, res, (error?: unknown) => {
    if (!error) return next();
    const { type, status } = error as { type?: string; status?: number };
    if (type === 'entity.too.large') return next(new PayloadTooLarge());
    if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
      return next(new UnsupportedMediaType('The request body must be JSON in UTF-8, without an unknown content encoding.'));
    }
    if (type === 'entity.parse.failed' || (status !== undefined && status >= 400 && status < 500)) {
      res.locals.invalidJson = true;
      return next();
    }
    next(error);
  });
}

/** The path of a request under `/v1` (which `forV1` let through) within the contract's paths: `/v1` taken off. */
const operationPath = (req: Request): string => (req.path.length > 3 ? req.path.slice(3) : '/');

export interface RouterOptions {
  contract: Contract;
  handlers: HandlerMap;
  db: Kysely<Database>;
  logger: Logger;
  secrets: SecretBox;
  /** The clock of the handlers' context; the real time unless given. */
  now?: () => Date;
  /** Whether webhooks may target non-public addresses and plain http (src/webhooks/targets.ts). */
  allowPrivateWebhookTargets?: boolean;
  /** Where idempotency and If-Match count what they decide; counters nobody reads unless given. */
  metrics?: Pick<Metrics, 'idempotency' | 'conditional'>;
  /** The process's live event streams, which `GET /events/stream` opens. */
  live?: LiveStreams;
  /** Told after a change committed, once its answer is on its way (the delivery worker fans its events out soon). */
  eventsWritten?: () => void;
  /** The log's end this instance knows, which an organization's read states as its `Log-Position` (src/events/knownLogEnd.ts). */
  knownLogEnd: Pick<KnownLogEnd, 'at'>;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** An operation ready to serve: reads its body when it has one, checks the request, runs its handler. */
interface Entry {
  isPublic: boolean;
  operationId: OperationId;
  route: string;
  handler: AnyHandler;
  /** The schema of its success answer, as text: a created record's tag is its body's when its read answers the same. */
  schema: string;
  serve(params: Record<string, string>, req: Request, res: Response, next: NextFunction): void;
}

interface Found {
  entry: Entry;
  params: Record<string, string>;
}

/**
 * The operations of the contract, answered under `/v1`: `public` serves the operations that need no
 * key (mounted before authentication), `authenticated` every other one (after it), and answers an
 * unknown path with 404 and a known path with another method with 405 and its Allow header.
 *
 * The route table is built once at start-up (find-my-way's radix tree: a lookup costs the same for
 * every operation, literal segments win over parameters so `/meetings/{id}/ratings/me` beats
 * `/{userId}`). As with Express's own routing, paths are matched without regard to case, a trailing
 * slash is allowed, HEAD is answered like GET without the body, and a path whose percent-encoding
 * cannot be decoded (`%FF`, `%u0041`, a lone `%`) names nothing that exists.
 */
export function operationRoutes(options: RouterOptions, publicOperations: readonly PublicOperationId[]) {
  const { contract, handlers, db, logger, secrets } = options;
  const metrics = options.metrics ?? createMetrics({ processMetrics: false });
  const now = options.now ?? (() => new Date());
  const allowPrivateWebhookTargets = options.allowPrivateWebhookTargets ?? false;
  const table = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: 16_384 });
  const paths = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: 16_384 });
  const methodsByPath = new Map<string, string[]>();
  const reads = resourceReads(contract.operations);
  const positions = logPositions(secrets);

  for (const operation of contract.operations) {
    const operationId = operation.operationId as OperationId;
    const handler = handlers[operationId] as unknown as AnyHandler;
    const scope = neededScope(operation);
    const bodySchema = (operation.requestBody as { content?: Record<string, { schema?: object }> } | undefined)?.content?.[
      'application/json'
    ]?.schema;
    const requestContent = (operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
    // A CSV import takes the file's text as its body (src/http/csvRequest.ts).
    const takesCsv = requestContent?.['text/csv'] !== undefined;
    const mediaType = successMediaType(operation);
    const integers = integerParameters(operation);
    const lists = listParameters(operation);
    const isChange = operation.method !== 'get';
    const ownEvent = writesItsEvent(handler);
    const read = reads.get(operationId);
    const readHandler = read && (handlers[read.operationId as OperationId] as unknown as AnyHandler);
    const successStatus = Object.keys(operation.responses ?? {}).find((status) => status.startsWith('2'));
    const deprecations = deprecationsOf(operation);
    const schema = successStatus === undefined ? 'null' : answerSchema(operation, successStatus);
    const stating = statesPosition(operation);
    // openapi-backend compiles them (Ajv) on an operation's first request and keeps them: one for the
    // body when there is one, one for the parameters. Compiling all 79 at start-up would take about 2 s.
    const validatorsOf = () => contract.api.validator.getRequestValidatorsForOperation(operationId) ?? [];

    const answer = async (params: Record<string, string>, req: Request, res: Response, next: NextFunction) => {
      if (scope && !scopeAllows(req.caller!.scopes, scope, req.caller!.systemRole)) return next(new InsufficientScope());
      if (res.locals.invalidJson) return next(invalidJson());
      const deepAt = bodySchema ? tooDeepAt(req.body) : undefined;
      if (deepAt) return next(tooDeep(deepAt));
      const idempotencyKey = isChange ? idempotencyKeyOf(req.headers['idempotency-key'] as string | undefined) : undefined;
      const ifMatch = read ? ifMatchOf(req.headers['if-match']) : undefined;

      const body = takesCsv ? (req.body as string) : bodySchema ? prepareBody(bodySchema as never, req.body) : undefined;
      const query = splitLists(req.query as Record<string, unknown>, lists);
      // The shape openapi-backend validates: its validators coerce `path` and `query` in place.
      const input = { path: { ...params }, query: { ...query }, header: req.headers, requestBody: body };
      const integerIssues = integers.length ? integerTextIssues(integers, { path: params, query }) : [];
      let errors: ErrorObject[] | undefined;
      for (const validate of validatorsOf()) {
        if (!validate(input)) errors = [...(errors ?? []), ...(validate.errors ?? [])];
      }
      if (integerIssues.length) {
        const others = errors ? validationError(errors) : undefined;
        const rest = others instanceof FormatError ? others.issues.filter((issue) => !integerIssues.some((own) => own.path[0] === issue.path[0] && own.origin === issue.origin)) : [];
        return next(new FormatError([...integerIssues, ...rest]));
      }
      if (errors) return next(validationError(errors));
      const nulIssues = nulCharacterIssues({ path: params, query, body });
      if (nulIssues.length) return next(new FormatError(nulIssues));

      const context = { db, logger, secrets, now, requestId: req.requestId, caller: req.caller, allowPrivateWebhookTargets, live: options.live, knownLogEnd: options.knownLogEnd, traceparent: traceparentOf(req.trace) };
      const request = { params: input.path, query: input.query, body };
      if (!isChange) {
        // Taken before the handler's first statement: the position is never newer than the answer.
        const position = stating ? options.knownLogEnd.at() : undefined;
        const result = await handler(request, context);
        if (position && result.status === 200) {
          if (result.logOf === undefined) throw new Error(`${operationId} answered without naming the organization whose log position it states`);
          // Also on a 304: the answer the client holds is as new as this one.
          res.setHeader('Log-Position', positions.seal(result.logOf, position));
        }
        // The docs page (with its own headers) and the changelog: text sent as it is, in the media type the contract names.
        if (mediaType === 'text/html') return pageHeaders(req, res, () => void res.status(result.status).type('html').send(result.body));
        if (mediaType === 'text/markdown') return void res.status(result.status).type(mediaType).send(result.body);
        if (result.body instanceof StreamBody) {
          for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
          return result.body.open(req, res);
        }
        return writeRead(req, res, outcomeOf(result), result.body instanceof JsonText ? result.body : undefined);
      }

      // The condition is judged on the resource as it was under the lock, after the change's own
      // checks (a refusal answers as without If-Match); a failed condition undoes the change.
      const conditionally = (database: Kysely<Database>) =>
        inTransaction(database, async (trx) => {
          const resource = Object.fromEntries(read!.parameters.map((name) => [name, params[name]]));
          await lockResource(trx, `${read!.operationId}\n${JSON.stringify(resource)}`);
          const current = await readHandler!({ params: resource, query: {}, body: undefined }, { ...context, db: trx });
          const result = await handler(request, { ...context, db: trx });
          requireIfMatch(ifMatch!, etagOf(bodyText(current.body)), metrics.conditional);
          return result;
        });
      // A created record's tag is the one its own read (its Location) answers right after: read in
      // the change's transaction when the create answers another shape than the read (a meeting).
      let readTag: string | undefined;
      const tagOfCreated = async (result: AnyResult, target: Kysely<Database>) => {
        const location = result.headers?.Location;
        if (location === undefined) return;
        const found = table.find('GET', location.replace(/^\/v1(?=\/)/, ''));
        if (!found) throw new Error(`${operationId} answered a Location that no read of the contract answers: ${location}`);
        const own = found.store as Entry;
        if (own.schema === schema) return;
        const current = await own.handler({ params: found.params, query: {}, body: undefined }, { ...context, db: target });
        readTag = etagOf(bodyText(current.body));
      };
      // A record a change alters as a side effect, as its own GET answers it to the caller in the change's transaction.
      const readRecord = async (path: string, target: Kysely<Database>) => {
        const found = table.find('GET', path);
        if (!found) throw new Error(`${operationId} declares a side effect read at ${path}, which no read of the contract answers`);
        const own = found.store as Entry;
        const answered = await own.handler({ params: found.params, query: {}, body: undefined }, { ...context, db: target });
        return answered.body instanceof JsonText ? JSON.parse(answered.body.text) : answered.body;
      };
      const change = async (database: Kysely<Database>): Promise<Outcome> => {
        const input = { params, query: request.query, body, userId: req.caller!.userId };
        readTag = undefined;
        const result = await withEvents(
          database,
          operationId,
          input,
          now,
          traceparentOf(req.trace),
          async (target, event) => {
            const answered = ifMatch === undefined ? await handler(request, { ...context, db: target, event }) : await conditionally(target);
            await tagOfCreated(answered, target);
            return answered;
          },
          ownEvent && ifMatch === undefined,
          readRecord,
        );
        const outcome = outcomeOf(result);
        if ((read?.sameRecord || outcome.headers.Location !== undefined) && outcome.body !== null) outcome.headers.ETag = readTag ?? etagOf(outcome.body);
        return outcome;
      };
      if (idempotencyKey !== undefined) {
        const { outcome, replayed } = await runIdempotent(
          db,
          {
            userId: req.caller!.userId,
            operationId,
            key: idempotencyKey,
            fingerprint: fingerprintOf(req.method, req.originalUrl, req.body),
            now: now(),
          },
          change,
          (error) => {
            const answer = errorAnswer(error);
            return { status: answer.status, headers: answer.headers, body: JSON.stringify(answer.body) };
          },
          metrics.idempotency,
        );
        if (replayed) res.setHeader('Idempotent-Replayed', 'true');
        writeOutcome(res, outcome);
        if (!replayed && outcome.status < 300) options.eventsWritten?.();
        return;
      }
      const outcome = await change(db);
      writeOutcome(res, outcome);
      if (outcome.status < 300) options.eventsWritten?.();
    };

    const entry: Entry = {
      isPublic: publicOperations.includes(operationId as PublicOperationId),
      operationId,
      route: `/v1${operation.path}`,
      handler,
      schema,
      serve: (params, req, res, next) => {
        // Before anything can answer: a refusal of a deprecated operation tells it too.
        if (deprecations) tellDeprecation(deprecations, req, res);
        const run = () => void answer(params, req, res, next).catch(next);
        if (takesCsv) return readCsvBody(req, res, (error?: unknown) => (error ? next(error) : run()));
        if (!bodySchema) return run();
        if (hasBody(req) && !req.is('application/json')) return next(new UnsupportedMediaType());
        readBody(req, res, (error?: unknown) => (error ? next(error) : run()));
      },
    };
    table.on(operation.method.toUpperCase() as Method, expressPath(operation.path), () => undefined, entry);
    methodsByPath.set(operation.path, [...(methodsByPath.get(operation.path) ?? []), operation.method.toUpperCase()]);
  }
  // Every path of the contract, the public ones included, answers 405 to a method it does not have.
  for (const [path, methods] of methodsByPath) paths.on('GET', expressPath(path), () => undefined, methods);

  const find = (req: Request): Found | undefined => {
    const found = table.find((req.method === 'HEAD' ? 'GET' : req.method) as Method, operationPath(req));
    return found ? { entry: found.store as Entry, params: found.params as Record<string, string> } : undefined;
  };

  return {
    public(req: Request, res: Response, next: NextFunction) {
      const found = find(req);
      res.locals.operation = found ?? null;
      // Before authentication: a refused request counts under the operation it asked for.
      if (found) res.locals.operationId = found.entry.operationId;
      if (!found?.entry.isPublic) return next();
      res.locals.route = found.entry.route;
      found.entry.serve(found.params, req, res, next);
    },
    authenticated(req: Request, res: Response, next: NextFunction) {
      const found = (res.locals.operation === undefined ? find(req) : res.locals.operation) as Found | null | undefined;
      if (!found) {
        const methods = paths.find('GET', operationPath(req))?.store as string[] | undefined;
        return next(methods ? new MethodNotAllowed(methods) : new NotFound());
      }
      res.locals.route = found.entry.route;
      found.entry.serve(found.params, req, res, next);
    },
  };
}
