/**
 * Applies the fields an operator manages onto an object read from the server, leaving every other
 * field (server defaults, other managers' fields) as it is. Objects merge key by key; arrays of the
 * same length merge element by element (so a container keeps its defaulted
 * `terminationMessagePath`), arrays of another length are replaced. Applying desired state that
 * is already there changes nothing — which is what lets `createOrPatch` send zero writes when
 * nothing drifted, and restore a hand edit when something did.
 */
export function overlay(target: object, desired: object): void {
  for (const [key, want] of Object.entries(desired)) {
    // Reflect: any object's fields by name, so typed objects (a StatefulSet) need no index signature.
    const have: unknown = Reflect.get(target, key);
    if (isObject(want) && isObject(have)) overlay(have, want);
    else if (Array.isArray(want) && Array.isArray(have) && want.length === have.length) overlayArray(have, want);
    else Reflect.set(target, key, structuredClone(want));
  }
}

function overlayArray(target: unknown[], desired: unknown[]): void {
  desired.forEach((want, i) => {
    const have = target[i];
    if (isObject(want) && isObject(have)) overlay(have, want);
    else if (Array.isArray(want) && Array.isArray(have) && want.length === have.length) overlayArray(have, want);
    else target[i] = structuredClone(want);
  });
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
