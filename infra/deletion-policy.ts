/**
 * The provider-side guard of a stateful resource: with PREVENT, `pulumi up` or `pulumi destroy` fails instead of
 * deleting (or replacing) it; turn `protectResources` off and run `pulumi up` before tearing a stack down.
 */
export function deletionPolicy(protect: boolean): { readonly deletionPolicy: "PREVENT" | "DELETE" } {
  return { deletionPolicy: protect ? "PREVENT" : "DELETE" };
}
