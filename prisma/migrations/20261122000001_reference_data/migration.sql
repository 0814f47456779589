-- Reference lists (DESIGN.md: global, read-only, seeded by migration).
-- Sources: ../shared/domain/chile-dte.md (document types, regions ISO 3166-2:CL, currencies),
-- ISO 4217 minor units, ISO 3166-1. Meaning of each document-type flag: docs/reference-data.md.

INSERT INTO "Country" ("id", "name", "nameEn", "phoneCode", "hasRegulation", "taxPercent") VALUES
  ('CL', 'Chile', 'Chile', '+56', true, 19),
  ('AR', 'Argentina', 'Argentina', '+54', true, 21),
  ('PE', 'Perú', 'Peru', '+51', true, 18),
  ('CO', 'Colombia', 'Colombia', '+57', true, 19),
  ('MX', 'México', 'Mexico', '+52', true, 16),
  ('US', 'Estados Unidos', 'United States', '+1', false, 0);

INSERT INTO "Currency" ("id", "conversionId", "countryId", "isDefault", "isChargeable", "available", "name", "nameEn", "rounded", "decimals") VALUES
  ('CLP', NULL,  'CL', true,  true,  true, 'Peso chileno', 'Chilean peso', true, 0),
  ('CLF', 'CLP', 'CL', false, false, true, 'Unidad de fomento', 'Unidad de Fomento (UF)', false, 4),
  ('ARS', NULL,  'AR', true,  false, true, 'Peso argentino', 'Argentine peso', false, 2),
  ('PEN', NULL,  'PE', true,  false, true, 'Sol', 'Peruvian sol', false, 2),
  ('COP', NULL,  'CO', true,  false, true, 'Peso colombiano', 'Colombian peso', false, 2),
  ('MXN', NULL,  'MX', true,  false, true, 'Peso mexicano', 'Mexican peso', false, 2),
  ('USD', NULL,  'US', true,  true,  true, 'Dólar estadounidense', 'US dollar', false, 2),
  ('EUR', NULL,  NULL, false, true,  true, 'Euro', 'Euro', false, 2);

INSERT INTO "State" ("id", "code", "countryId", "name") VALUES
  ('CL-AP', 'AP', 'CL', 'Arica y Parinacota'),
  ('CL-TA', 'TA', 'CL', 'Tarapacá'),
  ('CL-AN', 'AN', 'CL', 'Antofagasta'),
  ('CL-AT', 'AT', 'CL', 'Atacama'),
  ('CL-CO', 'CO', 'CL', 'Coquimbo'),
  ('CL-VS', 'VS', 'CL', 'Valparaíso'),
  ('CL-RM', 'RM', 'CL', 'Región Metropolitana de Santiago'),
  ('CL-LI', 'LI', 'CL', 'Libertador General Bernardo O''Higgins'),
  ('CL-ML', 'ML', 'CL', 'Maule'),
  ('CL-NB', 'NB', 'CL', 'Ñuble'),
  ('CL-BI', 'BI', 'CL', 'Biobío'),
  ('CL-AR', 'AR', 'CL', 'La Araucanía'),
  ('CL-LR', 'LR', 'CL', 'Los Ríos'),
  ('CL-LL', 'LL', 'CL', 'Los Lagos'),
  ('CL-AI', 'AI', 'CL', 'Aysén del General Carlos Ibáñez del Campo'),
  ('CL-MA', 'MA', 'CL', 'Magallanes y de la Antártica Chilena');

INSERT INTO "DocumentType" ("id", "countryId", "currencyId", "tax", "code", "name",
  "hasTaxes", "hasTaxesDetail", "hasLinesTotal", "hasLocalFormat", "holdTaxes", "isForeign",
  "isSale", "isPurchase", "isOrder", "isNote", "pricesIncludeTax", "send", "given") VALUES
  ('CL33',  'CL', 'CLP', 19, 33,  'Factura electrónica',                         true,  true,  true, true, false, false, true,  false, false, false, false, true, true),
  ('CL34',  'CL', 'CLP', 0,  34,  'Factura no afecta o exenta electrónica',      false, false, true, true, false, false, true,  false, false, false, false, true, true),
  ('CL39',  'CL', 'CLP', 19, 39,  'Boleta electrónica',                          true,  false, true, true, false, false, true,  false, false, false, true,  true, false),
  ('CL41',  'CL', 'CLP', 0,  41,  'Boleta no afecta o exenta electrónica',       false, false, true, true, false, false, true,  false, false, false, true,  true, false),
  ('CL46',  'CL', 'CLP', 19, 46,  'Factura de compra electrónica',               true,  true,  true, true, true,  false, false, true,  false, false, false, true, true),
  ('CL52',  'CL', 'CLP', 19, 52,  'Guía de despacho electrónica',                true,  true,  true, true, false, false, false, false, true,  false, false, true, true),
  ('CL56',  'CL', 'CLP', 19, 56,  'Nota de débito electrónica',                  true,  true,  true, true, false, false, true,  false, false, true,  false, true, false),
  ('CL61',  'CL', 'CLP', 19, 61,  'Nota de crédito electrónica',                 true,  true,  true, true, false, false, true,  false, false, true,  false, true, false),
  ('CL110', 'CL', 'USD', 0,  110, 'Factura de exportación electrónica',          false, false, true, true, false, true,  true,  false, false, false, false, true, false),
  ('CL111', 'CL', 'USD', 0,  111, 'Nota de débito de exportación electrónica',   false, false, true, true, false, true,  true,  false, false, true,  false, true, false),
  ('CL112', 'CL', 'USD', 0,  112, 'Nota de crédito de exportación electrónica',  false, false, true, true, false, true,  true,  false, false, true,  false, true, false);
