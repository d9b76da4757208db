export { freePort } from '../../scripts/ports.js';
