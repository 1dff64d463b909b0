/**
 * The etcd-history consistency audit (`auditConsistency`) run on every member of a fleet — each
 * member has its own etcd and so its own history — with one report per member and the totals.
 * Take `fleetAuditMark(fleet)` before the workload, `auditFleet({ fleet, resource, since })` after.
 */
import {
  auditConsistency,
  formatAuditReport,
  type AuditReport,
  type RecordedWrite,
} from '../chaos/consistency-audit.js';
import { omitUndefined } from '../../core/omit-undefined.js';
import { TestFleetError } from './test-fleet-error.js';
import type { TestFleet } from './test-fleet.js';

/** Per member, the first etcd revision the audit replays (one past the revision when the mark was taken). */
export type FleetAuditMark = Readonly<Record<string, number>>;

export interface FleetAuditOptions {
  readonly fleet: TestFleet;
  /**
   * The custom resource to audit; its etcd prefix is the member's own (`TestFleetMember.etcdPrefix`:
   * the modern server stores under `/registry/apiextensions.kubernetes.io/`). Give this or `prefix`.
   */
  readonly resource?: { readonly group: string; readonly plural: string };
  /** An etcd key prefix used on every member as it is, e.g. `/registry/example.com/widgets/`. */
  readonly prefix?: string;
  /** From `fleetAuditMark(fleet)`; a member missing from it is an error. */
  readonly since: FleetAuditMark;
  /** Members to audit. @defaultValue every member in `since` */
  readonly members?: readonly string[];
  /** Each member's recorded conditioned writes (see `RecordedWrite`). */
  readonly writes?: Readonly<Record<string, readonly RecordedWrite[]>>;
  /** Per member. @defaultValue DEFAULT_AUDIT_TIMEOUT_MS */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface FleetAuditReport {
  readonly members: Readonly<Record<string, AuditReport>>;
  /** Sums over the members. */
  readonly lostUpdates: number;
  readonly outOfOrderStatusWrites: number;
  readonly historyGaps: number;
  readonly puts: number;
}

/** Each member's etcd revision + 1 now: where an audit of what follows starts. */
export async function fleetAuditMark(fleet: TestFleet): Promise<FleetAuditMark> {
  const revisions = await Promise.all(fleet.members.map(async (m) => [m.name, (await m.env.etcdRevision()) + 1]));
  return Object.fromEntries(revisions) as FleetAuditMark;
}

/** Audits every member's etcd history of `prefix` since the mark, members in parallel. */
export async function auditFleet(options: FleetAuditOptions): Promise<FleetAuditReport> {
  const names = options.members ?? Object.keys(options.since);
  const { resource, prefix } = options;
  if ((resource === undefined) === (prefix === undefined))
    throw new TestFleetError('auditFleet: give either resource or prefix');
  const reports = await Promise.all(
    names.map(async (name) => {
      const startRevision = options.since[name];
      if (startRevision === undefined)
        throw new TestFleetError(`auditFleet: no start revision for member ${name} in the mark`);
      const member = options.fleet.member(name);
      const report = await auditConsistency({
        etcd: member.env,
        prefix: resource ? member.etcdPrefix(resource) : prefix!,
        startRevision,
        ...omitUndefined({ writes: options.writes?.[name], timeoutMs: options.timeoutMs, signal: options.signal }),
      });
      return [name, report] as const;
    }),
  );
  const sum = (f: (r: AuditReport) => number): number => reports.reduce((n, [, r]) => n + f(r), 0);
  return {
    members: Object.fromEntries(reports),
    lostUpdates: sum((r) => r.lostUpdates),
    outOfOrderStatusWrites: sum((r) => r.outOfOrderStatusWrites),
    historyGaps: sum((r) => r.historyGaps),
    puts: sum((r) => r.puts),
  };
}

/** One block per member (its audit head line and findings). */
export function formatFleetAuditReport(report: FleetAuditReport): string {
  return Object.entries(report.members)
    .map(([name, r]) => `${name}: ${formatAuditReport(r)}`)
    .join('\n');
}
