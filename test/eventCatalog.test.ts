/**
 * The event catalog (src/events/catalog.ts) against the contract, without a database: every changing
 * operation declares its events or why it sends none, every type declared is one of the contract's
 * `webhooks` and every one of those is sent by some operation, and each operation that sends events has
 * a matrix row to drive it in test/eventLog.test.ts and test/webhooks.test.ts, and each event's
 * description in openapi/webhooks/ names every operation that sends it (an event reused by a new
 * operation keeps no description of the first one alone). `make check-op` runs it whole (it takes a
 * second); a failure says which files to change.
 */
import { describe, expect, it } from 'vitest';
import { eventCatalog, eventSpecOf, jobEvents } from '../src/events/catalog.js';
import { matrixRows } from './permissions/rows.js';
import { handlers } from '../src/handlers/index.js';
import { writesItsEvent } from '../src/handlers/types.js';
import type { OpenAPIV3_1 } from 'openapi-types';
import { contract, operations } from './support/contract.js';
import { changingOperations, contractPlacesOf, eventfulOperations, whereEventsAreDeclared } from './support/eventLog.js';

const declaredTypes = new Set([
  ...eventfulOperations.flatMap((operationId) => [...eventSpecOf(operationId)!.types, ...(eventSpecOf(operationId)!.alsoSends ?? []).map((effect) => effect.type)]),
  ...Object.keys(jobEvents),
]);
const contractTypes = Object.keys(contract.webhooks ?? {}).filter((type) => type !== 'webhook.ping');

describe('the event catalog', () => {
  it.each(changingOperations)('%s declares its events in the catalog, or says why it sends none', (operationId) => {
    const declared = (eventCatalog as Partial<Record<string, unknown>>)[operationId];
    expect(declared, whereEventsAreDeclared(operationId)).toBeDefined();
  });

  it("declares only event types of the contract's webhooks", () => {
    const undocumented = [...declaredTypes].filter((type) => !contractTypes.includes(type));
    expect(undocumented, `declared in src/events/catalog.ts, so the contract needs ${contractPlacesOf(undocumented.join(', '))}`).toEqual([]);
  });

  it("has every event type of the contract's webhooks sent by an operation", () => {
    const unsent = contractTypes.filter((type) => !declaredTypes.has(type));
    expect(unsent, "declare each in src/events/catalog.ts for the operation that sends it (or in `jobEvents`, for a job's), or take it out of the contract's webhooks").toEqual([]);
  });

  it("names in the description of each job's event the operation that starts the job", () => {
    const unnamed = Object.entries(jobEvents)
      .filter(([type, job]) => !((contract.webhooks![type] as OpenAPIV3_1.PathItemObject).post?.description ?? '').includes(`\`${job.startedBy}\``))
      .map(([type, job]) => `openapi/webhooks/${type}.yaml: \`${job.startedBy}\``);
    expect(unnamed).toEqual([]);
  });

  const sideEffects = eventfulOperations.flatMap((operationId) => (eventSpecOf(operationId)!.alsoSends ?? []).map((effect) => ({ operationId, effect })));

  it.each(sideEffects.map(({ operationId, effect }) => [operationId, effect.type] as const))(
    "%s also sends %s, which the contract's description of that event names it for",
    (operationId, type) => {
      const operation = operations.find((candidate) => candidate.operationId === operationId)!;
      const description = (contract.webhooks?.[type] as { post: { description: string } }).post.description.replace(/\s+/g, ' ');
      expect(description, `name \`${operation.method.toUpperCase()} ${operation.path}\` in openapi/webhooks/${type}.yaml`).toContain(
        `\`${operation.method.toUpperCase()} ${operation.path}\``,
      );
    },
  );

  const bulkEffects = Object.entries(eventCatalog).flatMap(([operationId, declared]) => (declared.alsoWrites ?? []).map((effect) => [operationId, effect.type] as const));

  it.each(bulkEffects)("%s also writes %s for each record it alters in bulk, which the contract's description of that event names it for", (operationId, type) => {
    const operation = operations.find((candidate) => candidate.operationId === operationId)!;
    const description = (contract.webhooks?.[type] as { post: { description: string } }).post.description.replace(/\s+/g, ' ');
    expect(description, `name \`${operation.method.toUpperCase()} ${operation.path}\` in openapi/webhooks/${type}.yaml`).toContain(
      `\`${operation.method.toUpperCase()} ${operation.path}\``,
    );
  });

  it('declares side effects only for records with a GET, never for a change written in one statement with its event', () => {
    const reads = new Set(operations.filter((operation) => operation.method === 'get').map((operation) => operation.path));
    expect(sideEffects.filter(({ effect }) => !reads.has(effect.read))).toEqual([]);
    expect(sideEffects.filter(({ operationId }) => writesItsEvent(handlers[operationId])).map(({ operationId }) => operationId)).toEqual([]);
  });

  it('has a row of the authorization matrix for every operation that sends events, to drive it', () => {
    const driven = new Set(matrixRows.filter((row) => row.variant === undefined).map((row) => row.operationId));
    expect(eventfulOperations.filter((operationId) => !driven.has(operationId)), 'add its row to test/permissions/<area>.rows.ts').toEqual([]);
  });

  it("names in each event's description (openapi/webhooks/<type>.yaml) every operation that sends it, by its method and path or its operationId", () => {
    const unnamed: string[] = [];
    for (const type of contractTypes) {
      const description = (contract.webhooks![type] as OpenAPIV3_1.PathItemObject).post?.description ?? '';
      for (const operationId of eventfulOperations.filter((candidate) => eventSpecOf(candidate)!.types.includes(type))) {
        const op = operations.find((candidate) => candidate.operationId === operationId)!;
        const names = [`\`${op.method.toUpperCase()} ${op.path}\``, `\`${operationId}\``];
        if (!names.some((name) => description.includes(name))) unnamed.push(`openapi/webhooks/${type}.yaml: ${names[0]} (${operationId})`);
      }
    }
    expect(unnamed, 'name each in the description ("Sent after `PATCH /issues/{id}` …, and after …")').toEqual([]);
  });
});
