import type { KubeObject } from '../core/object-key.js';
import type { ControllerBuilder } from '../controller/controller-builder.js';
import type { FleetRequest } from './fleet-request.js';

/**
 * `manager.fleetController(name)`: the one `ControllerBuilder`, whose reconciler is given a
 * `FleetRequest` (the member cluster always named) and whose `ctx.cluster` is that member.
 */
export type FleetControllerBuilder<T extends KubeObject = KubeObject> = ControllerBuilder<T, FleetRequest>;
