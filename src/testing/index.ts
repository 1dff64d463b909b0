export { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
