/** Factories for documents, people reviews, the accountability chart and the vision: rows inserted straight into the database. */
import type { Insertable, Kysely } from 'kysely';
import type { Database, DocumentType, VisionsTable } from '../../src/db/database.js';

// ---------------------------------------------------------------------------------------------------
// Documents

export interface DocumentOptions {
  name?: string;
  url?: string;
  type?: DocumentType;
  createdAt?: Date;
}

const documentValues = (teamId: string, createdById: string, options: DocumentOptions) => ({
  team_id: teamId,
  created_by_id: createdById,
  name: options.name ?? 'Pipeline dashboard',
  url: options.url ?? 'https://crm.northwind.example/dashboards/pipeline',
  type: options.type ?? 'LINK',
  ...(options.createdAt ? { created_at: options.createdAt } : {}),
});

export function createDocument(db: Kysely<Database>, teamId: string, createdById: string, options: DocumentOptions = {}) {
  return db.insertInto('documents').values(documentValues(teamId, createdById, options)).returningAll().executeTakeFirstOrThrow();
}

/** Many documents in one insert; `options(i)` shapes the i-th. */
export function createDocuments(
  db: Kysely<Database>,
  teamId: string,
  createdById: string,
  count: number,
  options: (index: number) => DocumentOptions = () => ({}),
) {
  const rows = Array.from({ length: count }, (_, index) => documentValues(teamId, createdById, options(index)));
  return db.insertInto('documents').values(rows).returningAll().execute();
}

// ---------------------------------------------------------------------------------------------------
// People reviews

export interface PeopleReviewOptions {
  quarter?: string;
  coreValuesScores?: Record<string, boolean>;
  gwc?: { getsIt: boolean; wantsIt: boolean; capacityToDoIt: boolean };
  notes?: string | null;
}

export function createPeopleReview(db: Kysely<Database>, teamId: string, userId: string, evaluatorId: string, options: PeopleReviewOptions = {}) {
  return db
    .insertInto('people_reviews')
    .values({
      team_id: teamId,
      user_id: userId,
      evaluator_id: evaluatorId,
      quarter: options.quarter ?? '2026-Q4',
      core_values_scores: JSON.stringify(options.coreValuesScores ?? { 'Deliver on our promises': true, 'Grow or die': false }),
      gwc: JSON.stringify(options.gwc ?? { getsIt: true, wantsIt: true, capacityToDoIt: false }),
      notes: options.notes ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------------
// Accountability chart

export interface SeatOptions {
  title?: string;
  parentId?: string | null;
  userId?: string | null;
  responsibilities?: string | null;
  position?: number;
}

export function createSeat(db: Kysely<Database>, teamId: string, options: SeatOptions = {}) {
  return db
    .insertInto('seats')
    .values({
      team_id: teamId,
      parent_id: options.parentId ?? null,
      user_id: options.userId ?? null,
      title: options.title ?? 'Head of Sales',
      responsibilities: options.responsibilities ?? null,
      position: options.position ?? 1,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------------
// Vision

/** A vision holding exactly the given stored forms (JSON text for lists and objects, or older free text). */
export function createVision(db: Kysely<Database>, teamId: string, stored: Omit<Insertable<VisionsTable>, 'team_id'> = {}) {
  return db
    .insertInto('visions')
    .values({ team_id: teamId, ...stored })
    .returningAll()
    .executeTakeFirstOrThrow();
}
