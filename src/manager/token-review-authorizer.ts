/**
 * Who may read the metrics: the bearer token is checked by a TokenReview (authentication) and the
 * user it names by a SubjectAccessReview for `get` on the non-resource URL (authorization), as
 * kubebuilder's scaffold does with controller-runtime's `filters.WithAuthenticationAndAuthorization`.
 * Results are cached briefly, keyed by a hash of the token (never the token), so a scraper every
 * few seconds costs two API requests per TTL, not per scrape.
 */
import { createHash } from 'node:crypto';
import type { Creator } from '../client/contracts.js';
import { realClock, type Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';

/** How long an authentication or authorization answer is reused. @defaultValue 10,000 ms */
export const DEFAULT_AUTH_CACHE_TTL_MS = 10_000;
/** Distinct tokens remembered; the oldest is forgotten beyond this. @defaultValue 1024 */
export const DEFAULT_AUTH_CACHE_SIZE = 1024;

export interface TokenReviewAuthorizerOptions {
  /** The API client (not the cache): creates TokenReviews and SubjectAccessReviews. */
  readonly client: Creator;
  /** @defaultValue DEFAULT_AUTH_CACHE_TTL_MS */
  readonly cacheTtlMs?: number;
  /** @defaultValue DEFAULT_AUTH_CACHE_SIZE */
  readonly cacheSize?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** 200: allowed; 401: no or invalid token; 403: authenticated but not allowed; 500: the review failed. */
export type AuthorizationStatus = 200 | 401 | 403 | 500;

interface TokenReview {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  };
}
interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean };
}

export class TokenReviewAuthorizer {
  private readonly client: Creator;
  private readonly ttlMs: number;
  private readonly size: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly cache = new Map<string, { status: AuthorizationStatus; expiresAtMs: number }>();
  /** Concurrent scrapes with one token share one review. */
  private readonly inFlight = new Map<string, Promise<AuthorizationStatus>>();

  constructor(options: TokenReviewAuthorizerOptions) {
    this.client = options.client;
    this.ttlMs = options.cacheTtlMs ?? DEFAULT_AUTH_CACHE_TTL_MS;
    this.size = options.cacheSize ?? DEFAULT_AUTH_CACHE_SIZE;
    if (!(this.ttlMs >= 0)) throw new InvalidOptionError('cacheTtlMs', 'must be >= 0');
    if (!(Number.isInteger(this.size) && this.size >= 1))
      throw new InvalidOptionError('cacheSize', 'must be an integer >= 1');
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? silentLogger).child({ component: 'metrics-auth' });
  }

  /** Whether the request's `Authorization: Bearer` token may `get` `path`. */
  async authorize(authorization: string | undefined, path: string): Promise<AuthorizationStatus> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) return 401;
    const token = match[1]!;
    const key = createHash('sha256').update(path).update('\0').update(token).digest('base64url');
    const now = this.clock.monotonicNow();
    const hit = this.cache.get(key);
    if (hit && hit.expiresAtMs > now) return hit.status;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const review = this.review(token, path)
      .then((status) => {
        // A failed review (API server down) is not remembered: the next scrape asks again.
        if (status !== 500) this.remember(key, status);
        return status;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, review);
    return review;
  }

  private async review(token: string, path: string): Promise<AuthorizationStatus> {
    try {
      const tr = await this.client.create<TokenReview & { apiVersion: string; kind: string }>({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      } as never);
      const user = tr.status?.user;
      if (!tr.status?.authenticated || !user?.username) return 401;
      const sar = await this.client.create<SubjectAccessReview & { apiVersion: string; kind: string }>({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          // An empty uid is sent as none, as before.
          ...omitUndefined({ uid: user.uid || undefined, groups: user.groups, extra: user.extra }),
          nonResourceAttributes: { path, verb: 'get' },
        },
      } as never);
      const allowed = sar.status?.allowed === true && sar.status.denied !== true;
      if (!allowed) this.log.info({ user: user.username, path }, 'metrics request denied');
      return allowed ? 200 : 403;
    } catch (err) {
      // The error is the API server's about the review; the token is only in the request body.
      this.log.warn({ err: err instanceof Error ? err.message : String(err), path }, 'token or access review failed');
      return 500;
    }
  }

  private remember(key: string, status: AuthorizationStatus): void {
    this.cache.delete(key);
    this.cache.set(key, { status, expiresAtMs: this.clock.monotonicNow() + this.ttlMs });
    if (this.cache.size > this.size) this.cache.delete(this.cache.keys().next().value!);
  }
}
