import type { Server } from 'node:http';

/** Binds `server`; resolves once it listens, rejects with the bind error (EADDRINUSE, EACCES…). */
export function listenOn(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops accepting and ends every open connection (keep-alive ones too), so close() cannot hang. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
