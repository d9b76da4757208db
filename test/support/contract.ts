/**
 * The bundled contract as the tests see it: the list of operations and a validator that checks a
 * response (status and body) against what the contract declares for its operation.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { OpenAPIV3_1 } from 'openapi-types';

export const contractPath = resolve(import.meta.dirname, '../../generated/openapi.json');
export const contract = JSON.parse(readFileSync(contractPath, 'utf8')) as OpenAPIV3_1.Document;

export const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type Method = (typeof methods)[number];

export interface ContractOperation {
  operationId: string;
  method: Method;
  path: string;
  operation: OpenAPIV3_1.OperationObject;
  pathItem: OpenAPIV3_1.PathItemObject;
}

export const operations: ContractOperation[] = Object.entries(contract.paths ?? {}).flatMap(([path, pathItem]) =>
  methods
    .filter((method) => pathItem?.[method])
    .map((method) => {
      const operation = pathItem![method]!;
      return { operationId: operation.operationId!, method, path, operation, pathItem: pathItem! };
    }),
);

const pointerEscape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** Follows a local `$ref` to the object it names, returning the object and its JSON pointer. */
export function deref<T>(value: T | OpenAPIV3_1.ReferenceObject, pointer: string): { value: T; pointer: string } {
  if (value && typeof value === 'object' && '$ref' in value) {
    const target = value.$ref.replace(/^#/, '');
    const resolved = target
      .split('/')
      .slice(1)
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key.replaceAll('~1', '/').replaceAll('~0', '~')], contract);
    return deref(resolved as T, target);
  }
  return { value: value as T, pointer };
}

// Not checked against the JSON Schema meta-schema: the contract is an OpenAPI document, whose schemas
// sit under keys the meta-schema does not look into (Redocly lints them), and compiling the
// meta-schema cost every test file about 0.1 s of CPU.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats.default(ajv, { mode: 'full' });
ajv.addSchema(contract as object, 'openapi.json');

const validators = new Map<string, ValidateFunction>();
function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi.json#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

/** The success statuses the contract declares for an operation, lowest first. */
export function successStatuses(op: ContractOperation): number[] {
  return Object.keys(op.operation.responses ?? {})
    .map(Number)
    .filter((status) => status >= 200 && status < 300)
    .sort((a, b) => a - b);
}

export interface ResponseCheck {
  valid: boolean;
  problems: string[];
}

/** The headers the contract declares `required` on a response of an operation. */
export function requiredHeaders(op: ContractOperation, status: number): string[] {
  const declared = op.operation.responses?.[String(status)];
  if (!declared) return [];
  const { value: response } = deref<OpenAPIV3_1.ResponseObject>(declared, '');
  return Object.entries(response.headers ?? {})
    .filter(([, header]) => deref<OpenAPIV3_1.HeaderObject>(header, '').value.required === true)
    .map(([name]) => name);
}

/** The headers the contract declares on a response of an operation, required or not. */
export function declaredHeaders(op: ContractOperation, status: number): string[] {
  const declared = op.operation.responses?.[String(status)];
  if (!declared) return [];
  return Object.keys(deref<OpenAPIV3_1.ResponseObject>(declared, '').value.headers ?? {});
}

/**
 * Headers that mean something to a client (a tag to send back, where the record is, a place in the
 * log, a replay, when to retry) and that the pipeline may send whatever the contract says: a response
 * carrying one its status does not declare is outside the contract, although it breaks no schema.
 */
export const meaningfulHeaders = ['ETag', 'Location', 'Log-Position', 'Idempotent-Replayed', 'Retry-After'] as const;

/**
 * Checks a received response against the contract: the status must be declared for the
 * operation, the body must match the declared schema of that status and media type
 * (no body for responses without content), and, when `headers` are given, every header the
 * contract declares required for that status must be there and none of `meaningfulHeaders` it
 * does not declare for that status.
 */
export function checkResponse(
  op: ContractOperation,
  status: number,
  contentType: string | null,
  body: unknown,
  headers?: Headers,
): ResponseCheck {
  const basePointer = `/paths/${pointerEscape(op.path)}/${op.method}/responses/${status}`;
  const declared = op.operation.responses?.[String(status)];
  if (!declared) return { valid: false, problems: [`status ${status} is not declared for ${op.operationId}`] };
  const missing = headers ? requiredHeaders(op, status).filter((name) => !headers.has(name)) : [];
  if (missing.length > 0) return { valid: false, problems: missing.map((name) => `${op.operationId} answered ${status} without ${name}, which the contract declares required on that response`) };
  const undeclared = headers ? meaningfulHeaders.filter((name) => headers.has(name) && !declaredHeaders(op, status).includes(name)) : [];
  if (undeclared.length > 0) {
    return { valid: false, problems: undeclared.map((name) => `${op.operationId} answered ${status} with ${name}, which the contract does not declare on that response`) };
  }
  const { value: response, pointer } = deref<OpenAPIV3_1.ResponseObject>(declared, basePointer);
  const content = response.content ?? {};
  const mediaTypes = Object.keys(content);
  if (mediaTypes.length === 0) {
    const empty = body === undefined || body === '' || body === null;
    return empty ? { valid: true, problems: [] } : { valid: false, problems: [`status ${status} declares no body`] };
  }
  const mediaType = mediaTypes.find((type) => contentType?.startsWith(type));
  if (!mediaType) {
    return { valid: false, problems: [`content type ${contentType} is not one of ${mediaTypes.join(', ')}`] };
  }
  const validate = validatorAt(`${pointer}/content/${pointerEscape(mediaType)}/schema`);
  if (validate(body)) return { valid: true, problems: [] };
  return { valid: false, problems: (validate.errors ?? []).map(describe) };
}

const describe = (error: ErrorObject) => `${error.instancePath || '(body)'} ${error.message ?? error.keyword}`;

const eventPointer = '/components/schemas/Event';

/** Compiles the check of `checkEvent` now (a second or more on a busy machine, once per process) rather than at its first use. */
export function compileEventCheck(): void {
  validatorAt(eventPointer);
}

/** Checks an event of the feed or the live stream (a message's `data`) against the contract's `Event`. */
export function checkEvent(body: unknown): ResponseCheck {
  const validate = validatorAt(eventPointer);
  if (validate(body)) return { valid: true, problems: [] };
  return { valid: false, problems: (validate.errors ?? []).map(describe) };
}

/** Checks a received webhook event against the contract's `webhooks` entry of its type. */
export function checkWebhookEvent(body: { type?: unknown }): ResponseCheck {
  const type = String(body.type);
  if (!contract.webhooks?.[type]) return { valid: false, problems: [`event type ${type} is not in the contract's webhooks`] };
  const validate = validatorAt(`/webhooks/${pointerEscape(type)}/post/requestBody/content/application~1json/schema`);
  if (validate(body)) return { valid: true, problems: [] };
  return { valid: false, problems: (validate.errors ?? []).map(describe) };
}
