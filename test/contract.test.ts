import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { OperationId } from '../src/api/operations.js';
import { operationOrigins } from './fixtures/operationOrigins.js';
import { eventSpecOf, jobEvents } from '../src/events/catalog.js';
import { checkResponse, contract, declaredHeaders, deref, operations, successStatuses } from './support/contract.js';
import { eventfulOperations } from './support/eventLog.js';

const referenceFile = 'test/fixtures/reference-operations.txt';
const referenceOperations = readFileSync(resolve(import.meta.dirname, 'fixtures/reference-operations.txt'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'));
const strictBodies = ['createMeeting', 'updateMeeting', 'setMeetingRating', 'addOrganizationMember'];

const label = (op: (typeof operations)[number]) => `${op.method.toUpperCase()} ${op.path}`;
const schemaAt = (schema: unknown, pointer = '') => deref<OpenAPIV3_1.SchemaObject>(schema as OpenAPIV3_1.SchemaObject, pointer).value;
const jsonBodySchema = (op: (typeof operations)[number]) => {
  const body = op.operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined;
  const schema = body?.content?.['application/json']?.schema;
  return schema ? schemaAt(schema) : undefined;
};
const branches = (schema: OpenAPIV3_1.SchemaObject) => (schema.oneOf ?? [schema]).map((branch) => schemaAt(branch));

describe('the contract', () => {
  it('describes exactly the 79 operations of the reference, the additions beyond it, and the description, its docs page and the changelog', () => {
    expect(referenceOperations).toHaveLength(79);
    const ofOrigin = (origin: string) => operations.filter((op) => operationOrigins[op.operationId as OperationId] === origin).map(label);
    const missing = referenceOperations.filter((line) => !ofOrigin('reference').includes(line));
    expect(missing, `operations of ${referenceFile} the contract lacks or test/fixtures/operationOrigins.ts does not mark 'reference'`).toEqual([]);
    const extra = ofOrigin('reference').filter((line) => !referenceOperations.includes(line));
    expect(extra, `marked 'reference' in test/fixtures/operationOrigins.ts, but not in ${referenceFile}: mark them 'addition'`).toEqual([]);
    expect(ofOrigin('documentation').sort()).toEqual(['GET /changelog', 'GET /docs', 'GET /openapi.json']);
  });

  it('gives every operation a unique camelCase operationId, one declared tag, a summary and a description', () => {
    const declaredTags = new Set((contract.tags ?? []).map((tag) => tag.name));
    const ids = new Set<string>();
    for (const op of operations) {
      expect(op.operationId, label(op)).toMatch(/^[a-z][a-zA-Z0-9]*$/);
      expect(ids.has(op.operationId), op.operationId).toBe(false);
      ids.add(op.operationId);
      expect(op.operation.tags, op.operationId).toHaveLength(1);
      expect(declaredTags.has(op.operation.tags![0]!), op.operationId).toBe(true);
      expect(op.operation.summary, op.operationId).toMatch(/^[A-Z][^.]*[^.\s]$/);
      expect((op.operation.description ?? '').length, op.operationId).toBeGreaterThan(40);
    }
  });

  it('names the scope each operation needs: read for reads, write for changes, platform for platform administration', () => {
    for (const op of operations) {
      const expected = operationOrigins[op.operationId as OperationId] === 'documentation'
        ? []
        : [{ apiKey: [op.path.startsWith('/platform/') ? 'platform' : op.method === 'get' ? 'read' : 'write'] }];
      expect(op.operation.security, op.operationId).toEqual(expected);
    }
  });

  it('pages the paginated lists with limit and cursor and returns small lists whole', () => {
    for (const op of operations.filter((candidate) => candidate.method === 'get')) {
      const response = deref<OpenAPIV3_1.ResponseObject>(op.operation.responses!['200']!, '').value;
      const schema = response.content?.['application/json']?.schema;
      const nextCursor = schema && schemaAt(schema).properties?.nextCursor;
      const parameterNames = (op.operation.parameters ?? []).map((parameter) => schemaAt(parameter) as { name?: string }).map((p) => p.name);
      if (!nextCursor) {
        expect(parameterNames, op.operationId).not.toContain('limit');
        continue;
      }
      const paginated = schemaAt(nextCursor).type !== 'null';
      expect(parameterNames.includes('limit') && parameterNames.includes('cursor'), op.operationId).toBe(paginated);
    }
  });

  it('refuses unknown fields in exactly the four strict bodies of the reference', () => {
    const strict = operations
      .filter((op) => {
        const schema = jsonBodySchema(op);
        return schema !== undefined && branches(schema).every((branch) => branch.additionalProperties === false);
      })
      .map((op) => op.operationId);
    expect(strict.sort()).toEqual([...strictBodies].sort());
  });

  it('bounds every list and every open object a request may send: arrays have maxItems, maps have maxProperties', () => {
    const unbounded: string[] = [];
    const walk = (node: unknown, at: string, seen: ReadonlySet<string>): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${at}/${index}`, seen));
      if ('$ref' in node && typeof node.$ref === 'string') {
        if (seen.has(node.$ref)) return;
        return walk(deref(node, '').value, `${at} → ${node.$ref}`, new Set([...seen, node.$ref]));
      }
      const schema = node as OpenAPIV3_1.SchemaObject & { prefixItems?: unknown };
      const types = [schema.type ?? []].flat();
      if ((types.includes('array') || 'items' in schema || 'prefixItems' in schema) && schema.maxItems === undefined) unbounded.push(`${at}: an array without maxItems`);
      const open = (schema.additionalProperties !== undefined && schema.additionalProperties !== false) || 'patternProperties' in schema;
      if (open && schema.maxProperties === undefined) unbounded.push(`${at}: an open object without maxProperties`);
      for (const [key, child] of Object.entries(schema)) {
        if (['examples', 'example', 'enum', 'const', 'default', 'required'].includes(key)) continue;
        walk(child, `${at}/${key}`, seen);
      }
    };
    for (const op of operations) {
      for (const declared of [...(op.pathItem.parameters ?? []), ...(op.operation.parameters ?? [])]) {
        const parameter = deref<OpenAPIV3_1.ParameterObject>(declared, '').value;
        walk(parameter.schema, `${op.operationId} ${parameter.in} ${parameter.name}`, new Set());
      }
      const body = op.operation.requestBody && deref<OpenAPIV3_1.RequestBodyObject>(op.operation.requestBody, '').value;
      for (const [mediaType, media] of Object.entries(body?.content ?? {})) walk(media.schema, `${op.operationId} body (${mediaType})`, new Set());
    }
    expect(unbounded).toEqual([]);
  });

  it("lets each `types` filter (the organization's feed, a team's, the stream) name every event type the catalog sends once, and no more", () => {
    const eventTypes = schemaAt(contract.components!.schemas!.EventType!).enum!;
    const sent = new Set([...eventfulOperations.flatMap((operationId) => eventSpecOf(operationId)!.types), ...Object.keys(jobEvents)]);
    const filters = operations.flatMap((op) =>
      (op.operation.parameters ?? [])
        .map((declared) => deref<OpenAPIV3_1.ParameterObject>(declared, '').value)
        .filter((parameter) => (schemaAt(parameter.schema) as { items?: OpenAPIV3_1.ReferenceObject }).items?.$ref === '#/components/schemas/EventType')
        .map((parameter) => ({ at: `${op.operationId} ${parameter.name}`, maxItems: schemaAt(parameter.schema).maxItems, told: /\b1-(\d+) types\b/.exec(parameter.description ?? '')?.[1] })),
    );

    expect(filters.map((filter) => filter.at).sort()).toEqual(['listOrganizationEvents types', 'listTeamEvents types', 'streamEvents types']);
    expect(eventTypes.length, 'the contract\'s EventType against the types src/events/catalog.ts sends').toBe(sent.size);
    for (const filter of filters) expect([filter.at, filter.maxItems, Number(filter.told)], 'maxItems, and the "1-N types" of its description').toEqual([filter.at, sent.size, sent.size]);
  });

  it('makes every PATCH body change at least one field', () => {
    for (const op of operations.filter((candidate) => candidate.method === 'patch')) {
      const schema = jsonBodySchema(op);
      expect(schema, op.operationId).toBeDefined();
      for (const branch of branches(schema!)) {
        const needsOne = (branch.minProperties ?? 0) >= 1 || (branch.required ?? []).length >= 1;
        expect(needsOne, op.operationId).toBe(true);
      }
    }
  });

  it('declares X-Request-Id on every response, and Retry-After on 429', () => {
    for (const op of operations) {
      for (const [status, declared] of Object.entries(op.operation.responses ?? {})) {
        const response = deref<OpenAPIV3_1.ResponseObject>(declared, '').value;
        expect(Object.keys(response.headers ?? {}), `${op.operationId} ${status}`).toContain('X-Request-Id');
        if (status === '429') expect(Object.keys(response.headers ?? {})).toContain('Retry-After');
      }
    }
  });

  it('shows no answer as a replay: Idempotent-Replayed has no example, as a first answer carries none (and the mock shows examples)', () => {
    const claims: string[] = [];
    let declaring = 0;
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.operation.responses ?? {})) {
        const headers = deref<OpenAPIV3_1.ResponseObject>(response, '').value.headers ?? {};
        const replayed = headers['Idempotent-Replayed'];
        if (!replayed) continue;
        declaring += 1;
        const header = deref<OpenAPIV3_1.HeaderObject>(replayed, '').value;
        const schema = header.schema ? schemaAt(header.schema) : {};
        if (header.example !== undefined || header.examples !== undefined || schema.examples !== undefined) claims.push(`${op.operationId} ${status}`);
      }
    }
    expect(declaring).toBeGreaterThan(0);
    expect(claims).toEqual([]);
  });

  it('answers errors in the reference format on every operation that needs a key', () => {
    for (const op of operations.filter((candidate) => operationOrigins[candidate.operationId as OperationId] !== 'documentation')) {
      const statuses = Object.keys(op.operation.responses ?? {});
      expect(statuses, op.operationId).toEqual(expect.arrayContaining(['401', '403', '429', '500']));
      if (op.operation.requestBody) expect(statuses, op.operationId).toEqual(expect.arrayContaining(['413', '415', '422']));
      for (const status of statuses.filter((code) => Number(code) >= 400)) {
        const response = deref<OpenAPIV3_1.ResponseObject>(op.operation.responses![status]!, '').value;
        expect((response.content?.['application/json']?.schema as { $ref?: string }).$ref).toBe('#/components/schemas/ApiError');
      }
    }
  });

  it('gives every request body and every response body named examples that match their schemas', () => {
    for (const op of operations) {
      const body = op.operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined;
      // A JSON body, or a CSV file's (a CSV import).
      if (body) expect(Object.keys((body.content?.['application/json'] ?? body.content?.['text/csv'])?.examples ?? {}).length, op.operationId).toBeGreaterThan(0);
      for (const [status, declared] of Object.entries(op.operation.responses ?? {})) {
        const response = deref<OpenAPIV3_1.ResponseObject>(declared, '').value;
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          const examples = Object.entries(media.examples ?? {});
          expect(examples.length, `${op.operationId} ${status}`).toBeGreaterThan(0);
          for (const [name, example] of examples) {
            const { value } = deref<OpenAPIV3_1.ExampleObject>(example, '');
            const check = checkResponse(op, Number(status), mediaType, value.value);
            expect(check.problems, `${op.operationId} ${status} example ${name}`).toEqual([]);
          }
        }
      }
    }
  });

  it('names first the server that serves the contract (relative /v1), and describes every server in plain text, as Redoc shows it', () => {
    expect(contract.servers?.[0]?.url).toBe('/v1');
    for (const server of contract.servers ?? []) expect(server.description, server.url).toMatch(/^[^`*_[\]]+$/);
  });

  it('gives every const the type of its value, so that generators do not read `const: true` as a text', () => {
    const untyped: string[] = [];
    const visit = (node: unknown, pointer: string) => {
      if (Array.isArray(node)) return node.forEach((item, index) => visit(item, `${pointer}/${index}`));
      if (!node || typeof node !== 'object') return;
      const schema = node as { const?: unknown; type?: unknown };
      if ('const' in schema && schema.type !== typeof schema.const) untyped.push(pointer);
      for (const [key, value] of Object.entries(node)) if (key !== 'examples' && key !== 'example') visit(value, `${pointer}/${key}`);
    };
    visit(contract, '#');
    expect(untyped).toEqual([]);
  });

  it('names every event of the webhooks section in WebhookEvent, told apart by its type', () => {
    const eventSchemas = Object.entries(contract.webhooks ?? {}).map(([type, pathItem]) => {
      const body = (pathItem as OpenAPIV3_1.PathItemObject).post!.requestBody as OpenAPIV3_1.RequestBodyObject;
      return [type, (body.content!['application/json']!.schema as OpenAPIV3_1.ReferenceObject).$ref] as const;
    });
    const union = contract.components!.schemas!.WebhookEvent as OpenAPIV3_1.SchemaObject;
    expect(eventSchemas.length).toBeGreaterThan(0);
    expect((union.oneOf as OpenAPIV3_1.ReferenceObject[]).map((branch) => branch.$ref)).toEqual(eventSchemas.map(([, ref]) => ref));
    expect(union.discriminator).toEqual({ propertyName: 'type', mapping: Object.fromEntries(eventSchemas) });
    for (const [type, ref] of eventSchemas) {
      const typeProperty = schemaAt(schemaAt({ $ref: ref }).properties!.type);
      expect({ type: typeProperty.type, const: typeProperty.const }, type).toEqual({ type: 'string', const: type });
    }
  });

  it('declares one success status per operation, or 200 and 204 where the reference gives both', () => {
    for (const op of operations) {
      const statuses = successStatuses(op);
      const expected = op.operationId === 'setMeetingRating' ? [200, 204] : statuses.slice(0, 1);
      expect(statuses, op.operationId).toEqual(expected);
    }
  });
});

describe('the contract declares the headers of a created record', () => {
  const answerOf = (op: (typeof operations)[number], status: string) => deref<OpenAPIV3_1.ResponseObject>(op.operation.responses![status]!, '').value;
  const schemaText = (response: OpenAPIV3_1.ResponseObject) => JSON.stringify(response.content?.['application/json']?.schema ?? null);
  const header = (response: OpenAPIV3_1.ResponseObject, name: string) =>
    response.headers?.[name] && deref<OpenAPIV3_1.HeaderObject>(response.headers[name]!, '').value;
  const creates = operations.filter((op) => '201' in (op.operation.responses ?? {}) && answerOf(op, '201').content !== undefined);
  /** The records a GET of one resource answers (not a list), by their schema. */
  const readRecords = new Set(
    operations.filter((op) => op.method === 'get' && !['getApiDocs', 'getChangelog'].includes(op.operationId)).map((op) => schemaText(answerOf(op, '200'))).filter((schema) => !schema.includes('Page')),
  );

  it('declares a required Location and a required ETag together on a 201, with an example of the Location under /v1', () => {
    for (const op of creates) {
      const answer = answerOf(op, '201');
      const location = header(answer, 'Location');
      if (!location) continue;
      expect(location.required, op.operationId).toBe(true);
      expect(String(location.example), op.operationId).toMatch(/^\/v1\//);
      expect(header(answer, 'ETag')?.required, op.operationId).toBe(true);
    }
  });

  it('gives every 201 of a record a Location, unless the record has no read of its own and the answer says where it is shown', () => {
    for (const op of creates) {
      const answer = answerOf(op, '201');
      if (header(answer, 'Location')) continue;
      expect(readRecords.has(schemaText(answer)), `${op.operationId}: a GET answers this record, so its create needs Location`).toBe(false);
      expect(answer.description, op.operationId).toMatch(/no `GET` of its own[\s\S]*shown in/);
      expect(header(answer, 'ETag'), op.operationId).toBeUndefined();
    }
    expect(creates.filter((op) => header(answerOf(op, '201'), 'Location')).length).toBeGreaterThan(0);
  });
});

// The team snapshot states a log position, which moves with every change: a client follows the log
// from it rather than asking again, so it has no tag (its description says so).
const untaggedReads = ['getTeamSnapshot'];

describe('the contract declares every header the server sends on a success', () => {
  const declares = (op: (typeof operations)[number], status: number, name: string) => declaredHeaders(op, status).includes(name);
  const answersJson = (op: (typeof operations)[number], status: number) =>
    'application/json' in (deref<OpenAPIV3_1.ResponseObject>(op.operation.responses![String(status)]!, '').value.content ?? {});

  // The router tags every JSON read, and a change's answer when it is the record its read shows (its
  // resource's, or a created one's at its Location): a tag the contract leaves out works by accident,
  // and a client generated from the contract never learns of it.
  it("declares ETag on exactly the answers that carry one: every JSON read's 200 and 304, and a change's answer that is its resource's or a created record's", async () => {
    const { loadContract } = await import('../src/http/router.js');
    const { resourceReads } = await import('../src/http/conditional.js');
    const reads = resourceReads((await loadContract(contract as object)).operations);
    const missing: string[] = [];
    const extra: string[] = [];
    for (const op of operations) {
      const statuses = op.method === 'get' ? [200, ...('304' in op.operation.responses! ? [304] : [])] : successStatuses(op);
      for (const status of statuses) {
        const tagged = op.method === 'get'
          ? answersJson(op, 200) && !untaggedReads.includes(op.operationId)
          : answersJson(op, status) && (reads.get(op.operationId)?.sameRecord === true || declares(op, status, 'Location'));
        if (tagged && !declares(op, status, 'ETag')) missing.push(`${op.operationId} ${status}`);
        if (!tagged && declares(op, status, 'ETag')) extra.push(`${op.operationId} ${status}`);
      }
    }
    expect(missing, 'answers the server tags whose response in the contract declares no ETag').toEqual([]);
    expect(extra, 'answers whose response in the contract declares an ETag the server never sends').toEqual([]);
  });

  it('declares Idempotent-Replayed on every success of a change, as every one is stored under an Idempotency-Key, and on no read', () => {
    for (const op of operations) {
      for (const status of successStatuses(op)) expect(declares(op, status, 'Idempotent-Replayed'), `${op.operationId} ${status}`).toBe(op.method !== 'get');
    }
  });
});

describe('the contract declares the conditional requests the server evaluates', () => {
  const headerParameters = (op: (typeof operations)[number]) =>
    (op.operation.parameters ?? []).map((parameter) => deref<OpenAPIV3_1.ParameterObject>(parameter as OpenAPIV3_1.ParameterObject, '').value).filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name);

  it('declares If-Match and 412 on exactly the changes the server judges on a resource read', async () => {
    const { loadContract } = await import('../src/http/router.js');
    const { resourceReads } = await import('../src/http/conditional.js');
    const reads = resourceReads((await loadContract(contract as object)).operations);
    for (const op of operations.filter((candidate) => candidate.method !== 'get')) {
      const judged = reads.has(op.operationId);
      expect(headerParameters(op).includes('If-Match'), op.operationId).toBe(judged);
      expect('412' in op.operation.responses!, op.operationId).toBe(judged);
      expect(headerParameters(op), op.operationId).toContain('Idempotency-Key');
    }
  });

  it('declares If-None-Match and 304 on every JSON read but the snapshot, which declares neither nor an ETag', () => {
    // The docs page (HTML) and the live stream (server-sent events) are no JSON reads.
    const answersJson = (candidate: (typeof operations)[number]) => 'application/json' in ((candidate.operation.responses?.['200'] as { content?: object } | undefined)?.content ?? {});
    for (const op of operations.filter((candidate) => candidate.method === 'get' && answersJson(candidate))) {
      const tagged = !untaggedReads.includes(op.operationId);
      expect(headerParameters(op).includes('If-None-Match'), op.operationId).toBe(tagged);
      expect('304' in op.operation.responses!, op.operationId).toBe(tagged);
      expect('ETag' in ((op.operation.responses?.['200'] as { headers?: object }).headers ?? {}), op.operationId).toBe(tagged);
    }
  });
});
