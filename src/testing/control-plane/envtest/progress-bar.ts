/**
 * A one-line download progress bar, drawn only on a terminal (a CI log gets no carriage returns):
 * `envtest-v1.30.0-linux-amd64.tar.gz [########------------]  40%  21.3/53.2 MiB`.
 */

export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

const MIB = 1024 * 1024;

/** The bar's text for `received` of `total` bytes (total unknown: bytes only). */
export function renderProgress(label: string, received: number, total: number | undefined, width = 24): string {
  const mib = (n: number) => (n / MIB).toFixed(1);
  if (!total) return `${label} ${mib(received)} MiB`;
  const fraction = Math.min(1, received / total);
  const filled = Math.round(fraction * width);
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${mib(received)}/${mib(total)} MiB`;
}

export interface ProgressBar {
  update(received: number): void;
  done(): void;
}

/** A bar on `stream` when it is a TTY, redrawn at most every `intervalMs`; a no-op otherwise. */
export function progressBar(
  stream: ProgressStream | undefined,
  label: string,
  total: number | undefined,
  options: { readonly intervalMs?: number; readonly now?: () => number } = {},
): ProgressBar {
  if (!stream?.isTTY) return { update: () => {}, done: () => {} };
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 100;
  let last = -Infinity;
  let received = 0;
  return {
    update(bytes) {
      received = bytes;
      if (now() - last < intervalMs) return;
      last = now();
      stream.write(`\r${renderProgress(label, received, total)}`);
    },
    done() {
      stream.write(`\r${renderProgress(label, received, total)}\n`);
    },
  };
}
