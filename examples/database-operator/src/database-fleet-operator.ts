/**
 * The operator over a fleet (issue 26): with `members`, the manager engages those member clusters,
 * a fleet controller reconciles every member's Databases (the host's Database reconciler, working
 * in each request's cluster), and the DatabaseFleet controller rolls versions out across them.
 */
import type { EventRecorder, Manager } from 'operator-runtime';
import type { Controller } from 'operator-runtime/controller';
import type { FleetOptions } from 'operator-runtime/fleet';
import type { ControllerBuilderOptions } from 'operator-runtime/manager';
import { DATABASE } from './database.js';
import { DATABASE_FLEET } from './database-fleet.js';
import { DatabaseFleetReconciler, FLEET_CONTROLLER_NAME } from './database-fleet-reconciler.js';
import { declareDatabaseController, type DatabaseReconciler } from './database-reconciler.js';

/** The fleet controller of members' Databases: named apart from the host's (`database`), whose workqueue metrics it would repeat. */
export const MEMBER_CONTROLLER_NAME = 'database-members';

export interface DatabaseOperatorFleetOptions {
  /** The manager's `fleet` option: where member clusters come from (docs/fleet.md). */
  readonly members: FleetOptions;
  /** @defaultValue DEFAULT_ROLLOUT_POLL_MS */
  readonly rolloutPollMs?: number;
  /** @defaultValue DEFAULT_CONSISTENCY_CHECK_MS */
  readonly consistencyCheckMs?: number;
}

/** What the host's Database controller shares with the fleet's. */
export interface FleetControllerParts {
  readonly reconciler: DatabaseReconciler;
  /** The host's Event recorder: the DatabaseFleet's Events. */
  readonly recorder: EventRecorder;
  readonly run: ControllerBuilderOptions;
}

/** Registers the fleet's two controllers on `manager` (built with `fleet: members`); returns the DatabaseFleet one. */
export function addDatabaseFleetControllers(
  manager: Manager,
  fleet: DatabaseOperatorFleetOptions,
  parts: FleetControllerParts,
): Controller {
  // Every member's Databases, reconciled as the host controller reconciles the host's.
  declareDatabaseController(manager.fleetController(MEMBER_CONTROLLER_NAME).for(DATABASE))
    .withOptions(parts.run)
    .complete(parts.reconciler);
  return (
    manager
      .controller(FLEET_CONTROLLER_NAME)
      .for(DATABASE_FLEET)
      // Its status only: member Databases are written with each member's own client and RBAC.
      .writes(DATABASE_FLEET, ['patch'], { subresource: 'status' })
      .withOptions({ ...parts.run, maxConcurrentReconciles: 2 })
      .complete(
        new DatabaseFleetReconciler({
          client: manager.client,
          // The members engaged now (the manager's fleet, which `members` configures).
          fleet: { clusters: () => manager.fleet?.clusters() ?? [] },
          recorder: parts.recorder,
          rolloutPollMs: fleet.rolloutPollMs,
          consistencyCheckMs: fleet.consistencyCheckMs,
          clock: manager.clock,
        }),
      )
  );
}
