/** The contract fuzzer over every other operation of the contract (see suite.ts). */
import { fuzzOperations } from './suite.js';

fuzzOperations(1, 2);
