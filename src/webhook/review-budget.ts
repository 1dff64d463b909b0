/**
 * The webhook server's admission control: how many reviews may be in flight and how many bytes
 * they may hold (bodies as read, then what decoding them is estimated to take). A review that
 * does not fit is refused (429) instead of queued: the API server applies the webhook's
 * failurePolicy to the refusal, and a queue would only hold the memory longer. The last eighth
 * of each bound is kept for small reviews, so a burst of huge ones cannot starve ordinary writes.
 */

/** At or under this many bytes a review is small: it may use the part of the budget kept back. */
export const SMALL_REVIEW_BYTES = 64 * 1024;

export class ReviewBudget {
  private reviews = 0;
  private bytes = 0;

  constructor(
    private readonly maxReviews: number,
    private readonly maxBytes: number,
  ) {}

  get inFlightReviews(): number {
    return this.reviews;
  }

  get inFlightBytes(): number {
    return this.bytes;
  }

  /** Takes a review slot with `bytes` reserved; false when it does not fit. */
  tryAdmit(bytes: number): boolean {
    const small = bytes <= SMALL_REVIEW_BYTES;
    const reviewLimit = small ? this.maxReviews : Math.max(1, Math.floor((this.maxReviews * 7) / 8));
    if (this.reviews >= reviewLimit || !this.fits(bytes, small)) return false;
    this.reviews++;
    this.bytes += bytes;
    return true;
  }

  /** Grows an admitted review's reservation by `more` bytes; false (nothing taken) when it does not fit. */
  tryGrow(more: number, totalAfter: number): boolean {
    if (more <= 0) return true;
    if (!this.fits(more, totalAfter <= SMALL_REVIEW_BYTES)) return false;
    this.bytes += more;
    return true;
  }

  /** Whether `bytes` could ever be reserved by one review (else it is too large, not just early). */
  couldEverFit(bytes: number): boolean {
    return bytes <= Math.floor((this.maxBytes * 7) / 8);
  }

  /** Gives back an admitted review's slot and its `bytes`. */
  release(bytes: number): void {
    this.reviews--;
    this.bytes -= bytes;
  }

  private fits(bytes: number, small: boolean): boolean {
    const limit = small ? this.maxBytes : Math.floor((this.maxBytes * 7) / 8);
    return this.bytes + bytes <= limit;
  }
}
