/**
 * Routes /v1 requests to the handler of their operation, as the contract describes them: Express
 * routes built from the contract's paths (literal segments before parameters), 405 for a known path
 * with another method, then per request: media type, scope, body preparation and validation with
 * openapi-backend (Ajv 2020, all errors), the handler, and the response it returns.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { OperationId } from '../api/operations.js';
import type { SecretBox } from '../auth/secrets.js';
import { scopeAllows, type Scope } from '../auth/scopes.js';
import type { Database } from '../db/database.js';
import { FormatError, InsufficientScope, MethodNotAllowed, NotFound, PayloadTooLarge, UnsupportedMediaType } from '../errors.js';
import type { HandlerMap, PublicOperationId } from '../handlers/types.js';
import { prepareBody } from './requestBody.js';
import { nulCharacterIssues, validationError } from './validation.js';

type AnyHandler = (request: unknown, context: unknown) => Promise<{ status: number; body: unknown }>;

export interface Contract {
  api: OpenAPIBackend;
  operations: Operation[];
}

export async function loadContract(document: object): Promise<Contract> {
  const api = new OpenAPIBackend({
    definition: structuredClone(document) as never,
    apiRoot: '/',
    // The definition check of openapi-backend only knows OpenAPI 3.0; Redocly lints the contract instead.
    quick: true,
    validate: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, verbose: true, strict: false },
    customizeAjv: (_default, options) => {
      const ajv = new Ajv2020({ ...options, allErrors: true, verbose: true, strict: false });
      addFormats.default(ajv, { mode: 'full' });
      return ajv as never;
    },
  });
  await api.init();
  return { api, operations: api.getOperations() };
}

const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** Literal segments sort before parameters, so `/meetings/{id}/ratings/me` wins over `/{userId}`. */
const specificity = (path: string) =>
  path
    .split('/')
    .map((segment) => (segment.startsWith('{') ? '1' : '0'))
    .join('');

function neededScope(operation: Operation): Scope | undefined {
  const requirement = operation.security?.[0] as Record<string, string[]> | undefined;
  return requirement?.apiKey?.[0] as Scope | undefined;
}

function hasBody(req: Request): boolean {
  return Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
}

function successMediaType(operation: Operation): string | undefined {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (status.startsWith('2') && 'content' in response && response.content) return Object.keys(response.content)[0];
  }
  return undefined;
}

const invalidJson = () =>
  new FormatError([{ origin: 'body', code: 'invalid_json', path: [], message: 'The request body is not valid JSON.' }], 'The request body is not valid JSON.');

const parseJson = express.json({ limit: '64kb' });

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

/**
 * A path whose percent-encoding cannot be decoded (`%FF`, `%u0041`, a lone `%`) names nothing that
 * exists: 404 like any unknown path, before matching would fail on decoding its parameters.
 */
function refuseUndecodablePath(req: Request, _res: Response, next: NextFunction) {
  try {
    decodeURIComponent(req.path);
  } catch {
    return next(new NotFound());
  }
  next();
}

export interface RouterOptions {
  contract: Contract;
  handlers: HandlerMap;
  db: Kysely<Database>;
  logger: Logger;
  secrets: SecretBox;
  /** The clock of the handlers' context; the real time unless given. */
  now?: () => Date;
}

/**
 * The routes of one group of operations: `public` ones need no key and are mounted before
 * authentication; `authenticated` ones after it, followed by the 405 answers of every path.
 */
export function operationRoutes(options: RouterOptions, publicOperations: readonly PublicOperationId[], which: 'public' | 'authenticated') {
  const { contract, handlers, db, logger, secrets } = options;
  const now = options.now ?? (() => new Date());
  const router = express.Router();
  if (which === 'authenticated') router.use(refuseUndecodablePath);
  const selected = contract.operations
    .filter((operation) => publicOperations.includes(operation.operationId as PublicOperationId) === (which === 'public'))
    .sort((a, b) => specificity(a.path).localeCompare(specificity(b.path)));

  for (const operation of selected) {
    const operationId = operation.operationId as OperationId;
    const handler = handlers[operationId] as unknown as AnyHandler;
    const scope = neededScope(operation);
    const bodySchema = (operation.requestBody as { content?: Record<string, { schema?: object }> } | undefined)?.content?.[
      'application/json'
    ]?.schema;
    const mediaType = successMediaType(operation);

    const route = `/v1${operation.path}`;
    const checkMediaType = (req: Request, res: Response, next: NextFunction) => {
      res.locals.route = route;
      if (bodySchema && hasBody(req) && !req.is('application/json')) return next(new UnsupportedMediaType());
      next();
    };
    router[operation.method as 'get' | 'post' | 'put' | 'patch' | 'delete'](
      expressPath(operation.path),
      checkMediaType,
      ...(bodySchema ? [readBody] : []),
      async (req: Request, res: Response, next: NextFunction) => {
        if (scope && !scopeAllows(req.caller!.scopes, scope, req.caller!.systemRole)) return next(new InsufficientScope());
        if (res.locals.invalidJson) return next(invalidJson());

        const body = bodySchema ? prepareBody(bodySchema as never, req.body) : undefined;
        const result = contract.api.validator.validateRequest(
          { method: req.method, path: req.path, headers: req.headers as Record<string, string>, query: { ...req.query } as never, body },
          operation,
        );
        if (!result.valid) return next(validationError(result.errors ?? []));
        const nulIssues = nulCharacterIssues({ path: req.params as Record<string, string>, query: req.query as Record<string, unknown>, body });
        if (nulIssues.length) return next(new FormatError(nulIssues));

        const context = { db, logger, secrets, now, requestId: req.requestId, caller: req.caller };
        const answer = await handler({ params: { ...req.params }, query: result.coerced?.query ?? {}, body }, context);
        res.status(answer.status);
        if (answer.status === 204) res.end();
        else if (mediaType === 'text/html') res.type('html').send(answer.body);
        else res.json(answer.body);
      },
    );
  }

  if (which === 'authenticated') {
    // Every path of the contract, the public ones included, answers 405 to a method it does not have.
    const methodsByPath = new Map<string, string[]>();
    for (const operation of contract.operations) {
      methodsByPath.set(operation.path, [...(methodsByPath.get(operation.path) ?? []), operation.method.toUpperCase()]);
    }
    for (const [path, methods] of [...methodsByPath].sort(([a], [b]) => specificity(a).localeCompare(specificity(b)))) {
      router.all(expressPath(path), (_req: Request, _res: Response, next: NextFunction) => next(new MethodNotAllowed(methods)));
    }
  }
  return router;
}
