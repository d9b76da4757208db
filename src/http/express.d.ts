import type { Caller } from '../auth/authenticate.js';

declare global {
  namespace Express {
    interface Request {
      requestId: string;
      caller?: Caller;
    }
  }
}
