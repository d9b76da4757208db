/**
 * The probes, outside /v1 and without a key, as Kubernetes and load balancers use them:
 * - `GET /healthz`, liveness: the process answers. Nothing else is asked of it: while PostgreSQL is
 *   away the process stays up and serves again once it is back (README, "When PostgreSQL goes
 *   away"); a liveness probe that failed then would have every instance restarted at once, for
 *   nothing.
 * - `GET /readyz`, readiness: 200 only while the database answers and has every migration of this
 *   build applied, and 503 from the moment the process was asked to stop (`stop()`, on SIGTERM), so
 *   that a balancer stops sending it requests while those in flight finish.
 */
import type { Request, Response } from 'express';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import { pendingMigrations } from '../db/migrate.js';

export interface Probes {
  liveness(req: Request, res: Response): void;
  readiness(req: Request, res: Response): Promise<void>;
  /** From now on /readyz answers 503. */
  stop(): void;
  /** Whether anyone asked /readyz since the start: someone (a balancer) who must be given time to notice a stop. */
  readonly readinessAsked: boolean;
}

export function probes(db: Kysely<Database>): Probes {
  let stopping = false;
  let readinessAsked = false;
  return {
    liveness(_req, res) {
      // Probes are not API traffic: the request metrics leave them out.
      res.locals.probe = true;
      res.json({ status: 'ok' });
    },
    async readiness(_req, res) {
      res.locals.probe = true;
      readinessAsked = true;
      if (stopping) return void res.status(503).json({ status: 'stopping' });
      let pending: string[];
      try {
        pending = await pendingMigrations(db);
      } catch {
        return void res.status(503).json({ status: 'unavailable' });
      }
      if (pending.length > 0) return void res.status(503).json({ status: 'migrating' });
      // Again: the stop may have come while the database answered.
      if (stopping) return void res.status(503).json({ status: 'stopping' });
      res.json({ status: 'ok' });
    },
    stop() {
      stopping = true;
    },
    get readinessAsked() {
      return readinessAsked;
    },
  };
}
