/**
 * One group of runnables, as controller-runtime's `runnable_group.go` has one type for servers,
 * caches, leader-only and every-replica work: members start in the order added (each after the
 * previous one is ready) and stop in reverse. The manager is a sequence of groups; a term (a
 * leadership, a ring membership) runs a fresh group of its work.
 */
import { setMaxListeners } from 'node:events';
import { linkedAbortController } from '../core/abort.js';
import { AlreadyStartedError } from '../core/errors.js';
import type { Runnable } from './runnable.js';

/** Listeners a member's signal may carry before Node warns (informers put one or two each on theirs). */
const MAX_SIGNAL_LISTENERS = 10_000;

export interface GroupMember {
  /** For logs: a failure is reported with it. */
  readonly name: string;
  readonly runnable: Runnable;
  /**
   * Resolves once the runnable is ready (a server listening, the caches synced): the next member
   * starts only then, and the group's `start` resolves once every member is ready. Rejecting makes
   * `start` reject. @defaultValue ready as soon as started
   */
  readonly ready?: () => Promise<void>;
}

export interface RunnableGroupOptions {
  /**
   * Called when a member's `start` rejects, at any time. The group stops nothing itself: its owner
   * decides (the manager stops everything, in order, so the webhook server still closes last).
   */
  readonly onFailure: (err: unknown, member: string) => void;
}

interface Running {
  readonly stop: AbortController;
  /** Settles (never rejects) once the member has stopped. */
  readonly done: Promise<void>;
}

export class RunnableGroup {
  private readonly members: GroupMember[] = [];
  private readonly running: Running[] = [];
  private started = false;
  private stopping = false;

  constructor(
    readonly name: string,
    private readonly options: RunnableGroupOptions,
  ) {}

  get size(): number {
    return this.members.length;
  }

  /** Adds members, started after those already added. */
  add(...members: GroupMember[]): this {
    if (this.started) throw new AlreadyStartedError(`cannot add a runnable to the started ${this.name} group`);
    this.members.push(...members);
    return this;
  }

  /**
   * Starts the members in order and resolves once all are ready. They run until `signal` aborts
   * (all together, each seeing its reason: fencing needs that) or `stop()` stops them one by one.
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.started) throw new AlreadyStartedError(`the ${this.name} group was already started`);
    this.started = true;
    for (const member of this.members) {
      if (this.stopping) return;
      const started = this.run(member, signal);
      // A runnable that ends (or fails) before it is ready ends the wait too.
      if (member.ready) await Promise.race([member.ready(), started]);
    }
  }

  /** Stops the members that were started, the last first, each stopped before the next is asked. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const member of [...this.running].reverse()) {
      member.stop.abort();
      await member.done;
    }
  }

  /** Starts one member under its own signal, linked to the group's; returns its `start` promise. */
  private run(member: GroupMember, signal: AbortSignal | undefined): Promise<void> {
    const { controller: stop, dispose } = linkedAbortController(signal);
    setMaxListeners(MAX_SIGNAL_LISTENERS, stop.signal);
    let started: Promise<void>;
    try {
      started = member.runnable.start(stop.signal);
    } catch (err) {
      started = Promise.reject(err);
    }
    const done = started.then(
      () => dispose(),
      (err: unknown) => {
        dispose();
        this.options.onFailure(err, member.name);
      },
    );
    this.running.push({ stop, done });
    return started;
  }
}
