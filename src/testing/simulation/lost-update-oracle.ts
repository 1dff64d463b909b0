/**
 * Lost-update oracle, from two sources.
 *
 * 1. The store's history, through the consistency audit we run on real clusters (`analyzeHistory`,
 *    unchanged): each lost-update finding (generation decreased or skipped, uid replaced) and each
 *    out-of-order status write (observedGeneration decreased or ahead of generation) becomes a
 *    Finding. `history-gap` findings are not the operator's doing (events missing from the record)
 *    and are not reported here; the recorder rejects an incomplete history itself.
 * 2. The operator's writes: a `/status` write without a resourceVersion precondition that replaced a
 *    revision other than the newest the writing incarnation had seen, where the status at the
 *    replaced revision differs from the status at the seen one — it overwrote a status it had not
 *    seen (another writer's, or its own from before a restart). A write that replaced the same
 *    status it saw lost nothing and is not reported. Both statuses come from the history (the PUT
 *    at that revision); a write whose revisions the history lacks, or whose incarnation had seen
 *    nothing of the object, is no evidence either way.
 *
 * A history revision is given the time of the operator's write that produced it, else of the last
 * operator write before it (scenario writes have no recorded time): the step and fault of a
 * history finding are therefore those in force at, or shortly before, the offending write.
 */
import { canonicalJson } from '../../helpers/canonical-json.js';
import { analyzeHistory, type FindingKind, type HistoryEvent } from '../chaos/consistency-audit.js';
import { decodeHistoryKv } from '../chaos/history-values.js';
import { evidenceAttributor, brief } from './oracle-evidence.js';
import type { Finding, RunRecord, WriteRecord } from './simulation-records.js';

const REPORTED: ReadonlySet<FindingKind> = new Set<FindingKind>([
  'uid-replaced',
  'generation-decreased',
  'generation-skipped',
  'write-not-conditioned-on-read',
  'recorded-write-missing',
  'observed-generation-decreased',
  'condition-observed-generation-decreased',
  'observed-generation-ahead',
]);

const ADVICE: Partial<Record<FindingKind, string>> = {
  'generation-decreased':
    'a write replaced the object with an older copy of itself (a stale cache or pre-restart read written back without a resourceVersion)',
  'generation-skipped': 'the stored object was not derived from the revision before it',
  'uid-replaced': 'an object was overwritten by another object of the same name',
  'observed-generation-decreased':
    'a status computed from an older spec was written over a newer one (send the resourceVersion you read with status writes)',
  'condition-observed-generation-decreased': 'a condition computed from an older spec was written over a newer one',
  'observed-generation-ahead': 'status claims a generation the object does not have yet',
};

interface Put {
  readonly revision: number;
  readonly object: Record<string, unknown> | undefined;
}

export function lostUpdateOracle(run: RunRecord): Finding[] {
  const attribute = evidenceAttributor(run);
  const timeOfRevision = revisionClock(run.writes);
  const puts = new Map<number, Put & { readonly event: HistoryEvent }>();
  for (const event of run.history) {
    if (event.type === 'PUT')
      puts.set(event.kv.modRevision, {
        revision: event.kv.modRevision,
        object: decodeHistoryKv(event.kv),
        event,
      });
  }
  const findings: Finding[] = [];

  for (const f of analyzeHistory(run.history).findings) {
    if (!REPORTED.has(f.kind)) continue;
    const obj = puts.get(f.revision)?.object;
    findings.push({
      oracle: 'lost-update',
      key: obj ? nameOf(obj) : f.key,
      ...attribute(timeOfRevision(f.revision)),
      message: `${obj ? nameOf(obj) : f.key} at revision ${f.revision}${f.previousRevision !== undefined ? ` (replacing ${f.previousRevision})` : ''}: ${f.kind}: ${f.detail}${ADVICE[f.kind] ? ` — ${ADVICE[f.kind]}` : ''}`,
    });
  }

  for (const w of run.writes) {
    if (w.subresource !== 'status' || w.preconditionResourceVersion !== undefined) continue;
    if (w.observedResourceVersion === undefined || w.replacedResourceVersion === undefined) continue;
    if (w.observedResourceVersion === w.replacedResourceVersion) continue;
    const seen = puts.get(Number(w.observedResourceVersion));
    const replaced = puts.get(Number(w.replacedResourceVersion));
    if (!seen?.object || !replaced?.object) continue;
    const seenStatus = seen.object.status;
    const replacedStatus = replaced.object.status;
    if (canonicalJson(seenStatus ?? null) === canonicalJson(replacedStatus ?? null)) continue;
    const key = `${w.kind} ${w.namespace ? `${w.namespace}/` : ''}${w.name}`;
    findings.push({
      oracle: 'lost-update',
      key,
      ...attribute(w.atMs),
      message:
        `${key}: a status ${w.verb} (call ${w.at}, incarnation ${w.incarnation}) without a resourceVersion precondition ` +
        `overwrote a status it had not seen: it had last seen revision ${w.observedResourceVersion} (status ${brief(seenStatus)}) ` +
        `but replaced revision ${w.replacedResourceVersion} (status ${brief(replacedStatus)}). ` +
        'Send the resourceVersion you read with status writes (update, or a patch carrying metadata.resourceVersion) and retry from a fresh read on 409',
    });
  }
  return findings;
}

/** Time of a revision: the operator write that produced it, else the last operator write before it. */
function revisionClock(writes: readonly WriteRecord[]): (revision: number) => number {
  const points = writes
    .filter((w) => w.resultResourceVersion !== undefined && Number.isFinite(Number(w.resultResourceVersion)))
    .map((w) => ({ revision: Number(w.resultResourceVersion), atMs: w.atMs }))
    .sort((a, b) => a.revision - b.revision);
  return (revision) => {
    let atMs = Number.NEGATIVE_INFINITY;
    for (const p of points) if (p.revision <= revision) atMs = p.atMs;
    return atMs;
  };
}

function nameOf(obj: Record<string, unknown>): string {
  const m = (obj.metadata ?? {}) as { namespace?: string; name?: string };
  return `${typeof obj.kind === 'string' ? obj.kind : '?'} ${m.namespace ? `${m.namespace}/` : ''}${m.name ?? '?'}`;
}
