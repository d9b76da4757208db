/**
 * This process's id among the instances of the API: new at every start, the same in its log lines
 * that name an instance (the start, each live stream's opening) and in its trace spans
 * (`service.instance.id`). The start's line carries it beside pino's `hostname` and `pid`, so an
 * operator finds which host and process serve a stream whose opening names it.
 */
import { randomUUID } from 'node:crypto';

export const instanceId = randomUUID();
