import type { Caller } from '../auth/caller.js';

declare global {
  namespace Express {
    interface Request {
      requestId: string;
      caller?: Caller;
    }
  }
}
