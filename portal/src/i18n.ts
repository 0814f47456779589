/** The portal's texts in Spanish and English (the customer's country picks, the switch overrides). */
export type Locale = "es" | "en";

const es = {
  language: "Idioma",
  switchTo: "English",
  returnTo: (name: string) => `Volver a ${name}`,
  title: (name: string) => `Portal de clientes de ${name}`,
  invoices: "Facturas",
  creditNotes: "Notas de crédito",
  orders: "Pedidos",
  subscriptions: "Suscripciones",
  paymentMethods: "Medios de pago",
  billingDetails: "Datos de facturación",
  number: "Número",
  document: "Documento",
  date: "Fecha",
  dueDate: "Vencimiento",
  status: "Estado",
  total: "Total",
  amountDue: "Por pagar",
  actions: "Acciones",
  none: "No hay nada aquí todavía.",
  paid: "Pagada",
  open: "Pendiente",
  finalized: "Emitido",
  pdf: "PDF",
  xml: "XML",
  downloadPdf: (what: string) => `Descargar PDF de ${what}`,
  downloadXml: (what: string) => `Descargar XML (DTE) de ${what}`,
  pay: "Pagar",
  payAmount: (amount: string) => `Pagar ${amount}`,
  payInvoice: (what: string) => `Pagar ${what}`,
  payWith: "Pagar con",
  newCard: "Tarjeta nueva",
  cardToken: "Token de la tarjeta de prueba",
  checkout: "Pagar en la página de pago",
  paying: "Procesando el pago…",
  paymentSucceeded: "Pago recibido. ¡Gracias!",
  paymentFailed: (reason: string) => `El pago fue rechazado: ${reason}`,
  backToList: "Volver al listado",
  notFound: "No encontramos este documento.",
  card: (brand: string, last4: string) => `${brand} terminada en ${last4}`,
  default: "Predeterminada",
  makeDefault: "Usar como predeterminada",
  remove: "Eliminar",
  addCard: "Agregar tarjeta",
  noCards: "No hay medios de pago guardados.",
  plan: "Plan",
  nextBilling: "Próximo cobro",
  upcoming: "Próxima factura",
  cancelAtPeriodEnd: "Cancelar al final del período",
  endsOn: (date: string) => `Termina el ${date}`,
  nonTaxDocument: (number: number | string) => `Documento no tributario N° interno ${number}`,
  subscriptionStatus: {
    active: "Activa",
    past_due: "Pago atrasado",
    paused: "Pausada",
    cancelled: "Cancelada",
  } as Record<string, string>,
  email: "Correo de facturación",
  address: "Dirección",
  save: "Guardar",
  saved: "Datos guardados.",
  terms: "Términos del servicio",
  privacy: "Política de privacidad",
  expiredTitle: "Este enlace ha vencido",
  expiredText: "El enlace al portal ya no es válido. Pida uno nuevo a la empresa.",
  signOut: "Cerrar sesión",
  signOutFailed: "No pudimos cerrar la sesión. Inténtelo de nuevo.",
  signedOutTitle: "Sesión cerrada",
  signedOutText: "Cerró la sesión del portal de clientes. Para volver a entrar, abra el enlace que le dio la empresa.",
  checkoutRejected: "El pago no se completó en la página de pago.",
  goBack: "Volver",
  loading: "Cargando…",
  error: "Algo salió mal",
};

export type Texts = typeof es;

const en: Texts = {
  language: "Language",
  switchTo: "Español",
  returnTo: (name) => `Return to ${name}`,
  title: (name) => `${name} customer portal`,
  invoices: "Invoices",
  creditNotes: "Credit notes",
  orders: "Orders",
  subscriptions: "Subscriptions",
  paymentMethods: "Payment methods",
  billingDetails: "Billing details",
  number: "Number",
  document: "Document",
  date: "Date",
  dueDate: "Due date",
  status: "Status",
  total: "Total",
  amountDue: "Amount due",
  actions: "Actions",
  none: "Nothing here yet.",
  paid: "Paid",
  open: "Open",
  finalized: "Issued",
  pdf: "PDF",
  xml: "XML",
  downloadPdf: (what) => `Download the PDF of ${what}`,
  downloadXml: (what) => `Download the XML (DTE) of ${what}`,
  pay: "Pay",
  payAmount: (amount) => `Pay ${amount}`,
  payInvoice: (what) => `Pay ${what}`,
  payWith: "Pay with",
  newCard: "New card",
  cardToken: "Test card token",
  checkout: "Pay on the checkout page",
  paying: "Processing the payment…",
  paymentSucceeded: "Payment received. Thank you!",
  paymentFailed: (reason) => `The payment was declined: ${reason}`,
  backToList: "Back to the list",
  notFound: "We could not find this document.",
  card: (brand, last4) => `${brand} ending in ${last4}`,
  default: "Default",
  makeDefault: "Make default",
  remove: "Remove",
  addCard: "Add card",
  noCards: "No saved payment methods.",
  plan: "Plan",
  nextBilling: "Next billing date",
  upcoming: "Upcoming invoice",
  cancelAtPeriodEnd: "Cancel at period end",
  endsOn: (date) => `Ends on ${date}`,
  nonTaxDocument: (number) => `Non-tax document Internal No. ${number}`,
  subscriptionStatus: { active: "Active", past_due: "Past due", paused: "Paused", cancelled: "Cancelled" },
  email: "Billing e-mail",
  address: "Address",
  save: "Save",
  saved: "Details saved.",
  terms: "Terms of service",
  privacy: "Privacy policy",
  expiredTitle: "This link has expired",
  expiredText: "The portal link is no longer valid. Ask the business for a new one.",
  signOut: "Sign out",
  signOutFailed: "We could not sign you out. Please try again.",
  signedOutTitle: "Signed out",
  signedOutText: "You signed out of the customer portal. To come back, open the link the business gave you.",
  checkoutRejected: "The payment was not completed on the checkout page.",
  goBack: "Go back",
  loading: "Loading…",
  error: "Something went wrong",
};

export const TEXTS: Record<Locale, Texts> = { es, en };

/**
 * An amount (a decimal string from the API, never converted to a float) in `currency` with its
 * `decimals`: grouped thousands and the locale's decimal mark, e.g. "CLP 11.900" or "USD 1,234.50".
 */
export function formatMoney(value: string, currency: string, decimals: number, locale: Locale): string {
  const negative = value.startsWith("-");
  const [whole, fraction = ""] = value.replace(/^[-+]/, "").split(".");
  const group = locale === "es" ? "." : ",";
  const mark = locale === "es" ? "," : ".";
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, group);
  const digits = decimals > 0 ? mark + (fraction + "0".repeat(decimals)).slice(0, decimals) : "";
  return `${negative ? "-" : ""}${currency} ${grouped}${digits}`;
}

/** A yyyy-mm-dd date as dd-mm-yyyy (Spanish) or yyyy-mm-dd (English); "—" for none. */
export function formatDate(value: string | null | undefined, locale: Locale): string {
  if (!value) return "—";
  const [y, m, d] = value.slice(0, 10).split("-");
  return locale === "es" ? `${d}-${m}-${y}` : `${y}-${m}-${d}`;
}
