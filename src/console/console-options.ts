import type { ConsoleServerOptions } from './console-server.js';
import type { ConsoleStateOptions } from './console-state.js';

/** `ManagerOptions.console`: where the console listens and how much it remembers. */
export interface ConsoleOptions
  extends
    Omit<ConsoleServerOptions, 'clock'>,
    Omit<ConsoleStateOptions, 'clock' | 'informers' | 'clusters' | 'leaderElection'> {}
