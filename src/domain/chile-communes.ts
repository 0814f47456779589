/**
 * Chile's comunas (346, grouped by region and province) and the SII office with jurisdiction over
 * each one, for two uses (docs/sii-dte.md "The printed representation"):
 *
 * - a Chilean customer's `commune` must be one of these (services/customers.ts; SII's `CmnaRecep`);
 * - the header box of a printed DTE says `S.I.I. - <office>` under the folio, the office of the
 *   issuer's comuna (chile-dte.md §9: "S.I.I. - <SII regional office of the issuer's comuna>").
 *
 * Sources. Comunas: the División Político-Administrativa of Chile as the Subsecretaría de
 * Desarrollo Regional (SUBDERE) lists it with its Código Único Territorial (CUT: 346 comunas since
 * Ñuble became a region in 2018), regions as ISO 3166-2:CL (chile-dte.md §8). Checked: 346 distinct
 * comunas with the CUT's count per region (Arica y Parinacota 4, Tarapacá 7, Antofagasta 9,
 * Atacama 9, Coquimbo 15, Valparaíso 38, Metropolitana 52, O'Higgins 33, Maule 30, Ñuble 21, Biobío
 * 33, Araucanía 32, Los Ríos 12, Los Lagos 30, Aysén 10, Magallanes 11: test/domain/chile-communes
 * .test.ts), and the names of the CUT list compared one by one for regions I to VII, which agree
 * except the CUT's short forms kept here as aliases ("Calera" for La Calera). SII takes the comuna
 * in `CmnaRecep`/`CmnaOrigen` as free text (ComunaType, at most 20 characters), not as a code, so
 * the official name is what matters; the DTE cuts it to 20 characters.
 * Offices: SII's directory of Direcciones Regionales and their
 * Unidades (sii.cl, "Direcciones Regionales"): one Dirección Regional per region (four in the
 * Región Metropolitana: Santiago Centro, Oriente, Poniente and Sur), plus the provincial units
 * named below. The table was written from that directory as known to the authors; no copy of SII's
 * list of unidades regionales or of its current resolution on jurisdictions was available to
 * check it against, so the office mapping is unverified (the comunas are): it is complete for the Región Metropolitana
 * (every comuna has its Dirección Regional) and each regional capital; a comuna of a province
 * without a unit listed here falls back to its region's Dirección Regional (documented rule,
 * `siiOfficeOf`), which is where an unlisted unit reports to.
 */

/** A province's comunas and the SII unit serving them (null: the region's Dirección Regional). */
type Province = readonly [office: string | null, communes: readonly string[]];

/** A region: its ISO 3166-2 code, its Dirección Regional's name, its provinces. */
interface Region {
  iso: string;
  regionalOffice: string;
  provinces: readonly Province[];
}

const RM_CENTRO = "Santiago Centro";
const RM_ORIENTE = "Santiago Oriente";
const RM_PONIENTE = "Santiago Poniente";
const RM_SUR = "Santiago Sur";

const REGIONS: readonly Region[] = [
  {
    iso: "CL-AP",
    regionalOffice: "Arica",
    provinces: [
      [null, ["Arica", "Camarones"]],
      [null, ["Putre", "General Lagos"]],
    ],
  },
  {
    iso: "CL-TA",
    regionalOffice: "Iquique",
    provinces: [
      [null, ["Iquique", "Alto Hospicio"]],
      [null, ["Pozo Almonte", "Camiña", "Colchane", "Huara", "Pica"]],
    ],
  },
  {
    iso: "CL-AN",
    regionalOffice: "Antofagasta",
    provinces: [
      [null, ["Antofagasta", "Mejillones", "Sierra Gorda", "Taltal"]],
      ["Calama", ["Calama", "Ollagüe", "San Pedro de Atacama"]],
      ["Tocopilla", ["Tocopilla", "María Elena"]],
    ],
  },
  {
    iso: "CL-AT",
    regionalOffice: "Copiapó",
    provinces: [
      [null, ["Copiapó", "Caldera", "Tierra Amarilla"]],
      [null, ["Chañaral", "Diego de Almagro"]],
      ["Vallenar", ["Vallenar", "Alto del Carmen", "Freirina", "Huasco"]],
    ],
  },
  {
    iso: "CL-CO",
    regionalOffice: "La Serena",
    provinces: [
      [null, ["La Serena", "Coquimbo", "Andacollo", "La Higuera", "Paiguano", "Vicuña"]],
      ["Illapel", ["Illapel", "Canela", "Los Vilos", "Salamanca"]],
      ["Ovalle", ["Ovalle", "Combarbalá", "Monte Patria", "Punitaqui", "Río Hurtado"]],
    ],
  },
  {
    iso: "CL-VS",
    regionalOffice: "Valparaíso",
    provinces: [
      [null, ["Valparaíso", "Casablanca", "Concón", "Juan Fernández", "Puchuncaví", "Quintero"]],
      ["Viña del Mar", ["Viña del Mar"]],
      [null, ["Isla de Pascua"]],
      ["Los Andes", ["Los Andes", "Calle Larga", "Rinconada", "San Esteban"]],
      ["La Ligua", ["La Ligua", "Cabildo", "Papudo", "Petorca", "Zapallar"]],
      ["Quillota", ["Quillota", "La Calera", "Hijuelas", "La Cruz", "Nogales"]],
      ["San Antonio", ["San Antonio", "Algarrobo", "Cartagena", "El Quisco", "El Tabo", "Santo Domingo"]],
      ["San Felipe", ["San Felipe", "Catemu", "Llaillay", "Panquehue", "Putaendo", "Santa María"]],
      [null, ["Quilpué", "Limache", "Olmué", "Villa Alemana"]],
    ],
  },
  {
    iso: "CL-RM",
    regionalOffice: RM_CENTRO,
    provinces: [
      [RM_CENTRO, ["Santiago", "Independencia", "Recoleta", "Conchalí", "Huechuraba", "Colina", "Lampa", "Tiltil"]],
      [
        RM_ORIENTE,
        ["Providencia", "Las Condes", "Vitacura", "Lo Barnechea", "Ñuñoa", "La Reina", "Peñalolén", "Macul"],
      ],
      [
        RM_PONIENTE,
        [
          "Estación Central",
          "Quinta Normal",
          "Lo Prado",
          "Cerro Navia",
          "Pudahuel",
          "Renca",
          "Quilicura",
          "Maipú",
          "Cerrillos",
        ],
      ],
      [RM_PONIENTE, ["Melipilla", "Alhué", "Curacaví", "María Pinto", "San Pedro"]],
      [RM_PONIENTE, ["Talagante", "El Monte", "Isla de Maipo", "Padre Hurtado", "Peñaflor"]],
      [
        RM_SUR,
        [
          "San Miguel",
          "San Joaquín",
          "La Cisterna",
          "El Bosque",
          "San Ramón",
          "La Granja",
          "La Pintana",
          "Lo Espejo",
          "Pedro Aguirre Cerda",
          "La Florida",
        ],
      ],
      [RM_SUR, ["Puente Alto", "Pirque", "San José de Maipo"]],
      [RM_SUR, ["San Bernardo", "Buin", "Calera de Tango", "Paine"]],
    ],
  },
  {
    iso: "CL-LI",
    regionalOffice: "Rancagua",
    provinces: [
      [
        null,
        [
          "Rancagua",
          "Codegua",
          "Coinco",
          "Coltauco",
          "Doñihue",
          "Graneros",
          "Las Cabras",
          "Machalí",
          "Malloa",
          "Mostazal",
          "Olivar",
          "Peumo",
          "Pichidegua",
          "Quinta de Tilcoco",
          "Rengo",
          "Requínoa",
          "San Vicente",
        ],
      ],
      [null, ["Pichilemu", "La Estrella", "Litueche", "Marchihue", "Navidad", "Paredones"]],
      [
        "San Fernando",
        [
          "San Fernando",
          "Chépica",
          "Chimbarongo",
          "Lolol",
          "Nancagua",
          "Palmilla",
          "Peralillo",
          "Placilla",
          "Pumanque",
          "Santa Cruz",
        ],
      ],
    ],
  },
  {
    iso: "CL-ML",
    regionalOffice: "Talca",
    provinces: [
      [
        null,
        [
          "Talca",
          "Constitución",
          "Curepto",
          "Empedrado",
          "Maule",
          "Pelarco",
          "Pencahue",
          "Río Claro",
          "San Clemente",
          "San Rafael",
        ],
      ],
      ["Cauquenes", ["Cauquenes", "Chanco", "Pelluhue"]],
      [
        "Curicó",
        ["Curicó", "Hualañé", "Licantén", "Molina", "Rauco", "Romeral", "Sagrada Familia", "Teno", "Vichuquén"],
      ],
      ["Linares", ["Linares", "Colbún", "Longaví", "Parral", "Retiro", "San Javier", "Villa Alegre", "Yerbas Buenas"]],
    ],
  },
  {
    iso: "CL-NB",
    regionalOffice: "Chillán",
    provinces: [
      [
        null,
        ["Chillán", "Bulnes", "Chillán Viejo", "El Carmen", "Pemuco", "Pinto", "Quillón", "San Ignacio", "Yungay"],
      ],
      [null, ["Quirihue", "Cobquecura", "Coelemu", "Ninhue", "Portezuelo", "Ránquil", "Treguaco"]],
      [null, ["San Carlos", "Coihueco", "Ñiquén", "San Fabián", "San Nicolás"]],
    ],
  },
  {
    iso: "CL-BI",
    regionalOffice: "Concepción",
    provinces: [
      [
        null,
        [
          "Concepción",
          "Coronel",
          "Chiguayante",
          "Florida",
          "Hualqui",
          "Lota",
          "Penco",
          "San Pedro de la Paz",
          "Santa Juana",
          "Tomé",
        ],
      ],
      ["Talcahuano", ["Talcahuano", "Hualpén"]],
      [null, ["Lebu", "Arauco", "Cañete", "Contulmo", "Curanilahue", "Los Álamos", "Tirúa"]],
      [
        "Los Ángeles",
        [
          "Los Ángeles",
          "Antuco",
          "Cabrero",
          "Laja",
          "Mulchén",
          "Nacimiento",
          "Negrete",
          "Quilaco",
          "Quilleco",
          "San Rosendo",
          "Santa Bárbara",
          "Tucapel",
          "Yumbel",
          "Alto Biobío",
        ],
      ],
    ],
  },
  {
    iso: "CL-AR",
    regionalOffice: "Temuco",
    provinces: [
      [
        null,
        [
          "Temuco",
          "Carahue",
          "Cunco",
          "Curarrehue",
          "Freire",
          "Galvarino",
          "Gorbea",
          "Lautaro",
          "Loncoche",
          "Melipeuco",
          "Nueva Imperial",
          "Padre Las Casas",
          "Perquenco",
          "Pitrufquén",
          "Pucón",
          "Saavedra",
          "Teodoro Schmidt",
          "Toltén",
          "Vilcún",
          "Villarrica",
          "Cholchol",
        ],
      ],
      [
        "Angol",
        [
          "Angol",
          "Collipulli",
          "Curacautín",
          "Ercilla",
          "Lonquimay",
          "Los Sauces",
          "Lumaco",
          "Purén",
          "Renaico",
          "Traiguén",
          "Victoria",
        ],
      ],
    ],
  },
  {
    iso: "CL-LR",
    regionalOffice: "Valdivia",
    provinces: [
      [null, ["Valdivia", "Corral", "Lanco", "Los Lagos", "Máfil", "Mariquina", "Paillaco", "Panguipulli"]],
      [null, ["La Unión", "Futrono", "Lago Ranco", "Río Bueno"]],
    ],
  },
  {
    iso: "CL-LL",
    regionalOffice: "Puerto Montt",
    provinces: [
      [
        null,
        [
          "Puerto Montt",
          "Calbuco",
          "Cochamó",
          "Fresia",
          "Frutillar",
          "Los Muermos",
          "Llanquihue",
          "Maullín",
          "Puerto Varas",
        ],
      ],
      [
        "Castro",
        [
          "Castro",
          "Ancud",
          "Chonchi",
          "Curaco de Vélez",
          "Dalcahue",
          "Puqueldón",
          "Queilén",
          "Quellón",
          "Quemchi",
          "Quinchao",
        ],
      ],
      ["Osorno", ["Osorno", "Puerto Octay", "Purranque", "Puyehue", "Río Negro", "San Juan de la Costa", "San Pablo"]],
      [null, ["Chaitén", "Futaleufú", "Hualaihué", "Palena"]],
    ],
  },
  {
    iso: "CL-AI",
    regionalOffice: "Coyhaique",
    provinces: [
      [null, ["Coyhaique", "Lago Verde"]],
      [null, ["Aysén", "Cisnes", "Guaitecas"]],
      [null, ["Cochrane", "O'Higgins", "Tortel"]],
      [null, ["Chile Chico", "Río Ibáñez"]],
    ],
  },
  {
    iso: "CL-MA",
    regionalOffice: "Punta Arenas",
    provinces: [
      [null, ["Punta Arenas", "Laguna Blanca", "Río Verde", "San Gregorio"]],
      [null, ["Cabo de Hornos", "Antártica"]],
      [null, ["Porvenir", "Primavera", "Timaukel"]],
      [null, ["Natales", "Torres del Paine"]],
    ],
  },
];

/** A comuna: its official name, its region (ISO 3166-2) and the SII office with jurisdiction. */
export interface Commune {
  name: string;
  region: string;
  siiOffice: string;
}

/** Other spellings in common use, keyed like `communeKey`. */
const ALIASES: Record<string, string> = {
  "llay-llay": "Llaillay",
  llayllay: "Llaillay",
  aisen: "Aysén",
  "puerto aysen": "Aysén",
  "puerto natales": "Natales",
  marchigue: "Marchihue",
  "chol chol": "Cholchol",
  "til til": "Tiltil",
  "san pedro de melipilla": "San Pedro",
  "santiago centro": "Santiago",
  calera: "La Calera",
  paihuano: "Paiguano",
  trehuaco: "Treguaco",
  coihaique: "Coyhaique",
};

/** Case-, accent- and spacing-insensitive key of a comuna's name ("Ñuñoa", "NUNOA", " ñuñoa " → "nunoa"). */
export function communeKey(name: string): string {
  return name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[’`´]/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}

const BY_KEY = new Map<string, Commune>();
for (const region of REGIONS) {
  for (const [office, names] of region.provinces) {
    for (const name of names)
      BY_KEY.set(communeKey(name), { name, region: region.iso, siiOffice: office ?? region.regionalOffice });
  }
}
for (const [alias, name] of Object.entries(ALIASES)) BY_KEY.set(alias, BY_KEY.get(communeKey(name))!);

/** Every comuna of Chile, official names, north to south by region. */
export const CHILEAN_COMMUNES: readonly string[] = REGIONS.flatMap((r) => r.provinces.flatMap(([, names]) => names));

/**
 * The comuna `name` designates (any case, with or without accents, or a common alias), or null when it is none of
 * Chile's.
 */
export function findCommune(name: string): Commune | null {
  return BY_KEY.get(communeKey(name)) ?? null;
}

/**
 * The SII office with jurisdiction over comuna `name`, as printed after `S.I.I. - ` ("Santiago
 * Oriente" for Las Condes, "Calama" for San Pedro de Atacama, "Rancagua" for Pichilemu: a
 * province without a unit of its own falls back to its region's Dirección Regional). Null when
 * `name` is not a comuna of Chile (an issuer abroad, or a comuna given in a form not recognized):
 * the header then prints no office line.
 */
export function siiOfficeOf(name: string | null | undefined): string | null {
  return name ? (findCommune(name)?.siiOffice ?? null) : null;
}
