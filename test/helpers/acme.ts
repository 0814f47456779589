/**
 * The test organization "Acme SpA"'s tax profile (OrganizationSettings columns): what the test servers, the service
 * tests and the database copy give it, so its documents print and sign with a valid RUT (SII: the issuer's RUT,
 * RznSoc, DirOrigen, CmnaOrigen and Giro).
 */
export const ACME_TAX_PROFILE = {
  taxId: "76042235-5",
  taxBusinessName: "Acme SpA",
  taxAddress: "Av. Providencia 1234",
  taxCommune: "Providencia",
  taxActivity: "Servicios informáticos",
} as const;
