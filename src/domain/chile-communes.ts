/**
 * Chile's comunas (346, by region, grouped by the SII unit serving them) and the SII office with
 * jurisdiction over each one, for two uses (docs/sii-dte.md "The printed representation"):
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
 * .test.ts), and every name compared one by one with the CUT list: regions I to VII earlier; regions
 * VIII to XVI (Biobío, Araucanía, Los Lagos, Aysén, Magallanes, Metropolitana, Los Ríos, Arica y
 * Parinacota, Ñuble) name by name and code by code against two copies of SUBDERE's CUT table,
 * https://github.com/pachadotdev/chilemapas (data_csv/territorial_codes.csv, CUT codes 08101-16305,
 * names without accents) and https://github.com/knxroot/bdcut-cl (BD/CSV_utf8, with accents): every
 * comuna is there under its province's code, and the names agree except "Padre las Casas" (written
 * "Padre Las Casas" here before, now as the CUT has it) and chilemapas' "Coihaique"/"Aisen" for
 * Coyhaique/Aysén (bdcut-cl writes the comunas as here; the other forms are aliases). The CUT's
 * other short forms are aliases too ("Calera" for La Calera). SII takes the comuna in
 * `CmnaRecep`/`CmnaOrigen` as free text (ComunaType, at most 20 characters), not as a code, so the
 * official name is what matters; the DTE cuts it to 20 characters.
 *
 * Offices: no list of SII's own of its Direcciones Regionales and Unidades with their comunas was
 * found (sii.cl pages and SII resolutions on jurisdictions were looked for, none was at hand). The
 * table follows, comuna by comuna, LibreDTE's table of the SII unit of each comuna (the office its
 * printed DTEs name), https://github.com/LibreDTE/libredte-lib-core,
 * resources/data/repository/comunas.php (`direccion_regional`), checked entry by entry: SII's
 * Direcciones Regionales (one per region and five in the Región Metropolitana: Santiago Centro,
 * Norte, Oriente, Poniente and Sur) and its local units (Taltal, Chañaral, Coquimbo, Viña del Mar,
 * Villa Alemana, Providencia, Ñuñoa, Maipú, La Florida, San Bernardo, Buin, Melipilla, …). Five
 * comunas are missing there (Navidad, San Rafael, Coihueco, Quinchao, Antártica): each has the
 * unit of the rest of its province (Quinchao: Castro, its neighbours'), as marked below.
 * LibreDTE's misspelt keys (COMQUIMBO, CHOCHI, REINACO) are read as the comunas they name. A third
 * party's table, not SII's: correct it here if SII says otherwise.
 */

/** A group of comunas of one region (a province, or part of one) and the SII unit serving them. */
type Province = readonly [office: string, communes: readonly string[]];

/** A region: its ISO 3166-2 code, its Dirección Regional's name, its comunas by SII unit. */
interface Region {
  iso: string;
  regionalOffice: string;
  provinces: readonly Province[];
}

const REGIONS: readonly Region[] = [
  {
    iso: "CL-AP",
    regionalOffice: "Arica",
    provinces: [["Arica", ["Arica", "Camarones", "Putre", "General Lagos"]]],
  },
  {
    iso: "CL-TA",
    regionalOffice: "Iquique",
    provinces: [["Iquique", ["Iquique", "Alto Hospicio", "Pozo Almonte", "Camiña", "Colchane", "Huara", "Pica"]]],
  },
  {
    iso: "CL-AN",
    regionalOffice: "Antofagasta",
    provinces: [
      ["Antofagasta", ["Antofagasta", "Mejillones", "Sierra Gorda"]],
      ["Taltal", ["Taltal"]],
      ["Calama", ["Calama", "Ollagüe", "San Pedro de Atacama"]],
      ["Tocopilla", ["Tocopilla", "María Elena"]],
    ],
  },
  {
    iso: "CL-AT",
    regionalOffice: "Copiapó",
    provinces: [
      ["Copiapó", ["Copiapó", "Caldera", "Tierra Amarilla"]],
      ["Chañaral", ["Chañaral", "Diego de Almagro"]],
      ["Vallenar", ["Vallenar", "Alto del Carmen", "Freirina", "Huasco"]],
    ],
  },
  {
    iso: "CL-CO",
    regionalOffice: "La Serena",
    provinces: [
      ["La Serena", ["La Serena", "Andacollo", "La Higuera", "Paiguano", "Vicuña"]],
      ["Coquimbo", ["Coquimbo"]],
      ["Illapel", ["Illapel", "Canela", "Los Vilos", "Salamanca"]],
      ["Ovalle", ["Ovalle", "Combarbalá", "Monte Patria", "Punitaqui", "Río Hurtado"]],
    ],
  },
  {
    iso: "CL-VS",
    regionalOffice: "Valparaíso",
    provinces: [
      ["Valparaíso", ["Valparaíso", "Casablanca", "Juan Fernández"]],
      ["Viña del Mar", ["Concón", "Puchuncaví", "Quintero", "Viña del Mar"]],
      ["Valparaíso", ["Isla de Pascua"]],
      ["Los Andes", ["Los Andes", "Calle Larga", "Rinconada", "San Esteban"]],
      ["La Ligua", ["La Ligua", "Cabildo", "Papudo", "Petorca", "Zapallar"]],
      ["Quillota", ["Quillota", "La Calera", "Hijuelas", "La Cruz", "Nogales"]],
      ["San Antonio", ["San Antonio", "Algarrobo", "Cartagena", "El Quisco", "El Tabo", "Santo Domingo"]],
      ["San Felipe", ["San Felipe", "Catemu", "Llaillay", "Panquehue", "Putaendo", "Santa María"]],
      ["Villa Alemana", ["Quilpué", "Villa Alemana"]],
      ["Quillota", ["Limache", "Olmué"]],
    ],
  },
  {
    iso: "CL-RM",
    regionalOffice: "Santiago Centro",
    provinces: [
      ["Santiago Centro", ["Santiago"]],
      ["Santiago Norte", ["Conchalí", "Huechuraba", "Independencia", "Quilicura", "Recoleta"]],
      ["Santiago Poniente", ["Cerro Navia", "Estación Central", "Lo Prado", "Pudahuel", "Quinta Normal", "Renca"]],
      ["Santiago Oriente", ["Las Condes", "Lo Barnechea", "Vitacura"]],
      ["Providencia", ["Providencia"]],
      ["Ñuñoa", ["La Reina", "Macul", "Ñuñoa", "Peñalolén"]],
      [
        "Santiago Sur",
        [
          "La Cisterna",
          "La Granja",
          "La Pintana",
          "Lo Espejo",
          "Pedro Aguirre Cerda",
          "San Joaquín",
          "San Miguel",
          "San Ramón",
        ],
      ],
      ["San Bernardo", ["El Bosque"]],
      ["La Florida", ["La Florida"]],
      ["Maipú", ["Cerrillos", "Maipú"]],
      ["La Florida", ["Puente Alto", "Pirque", "San José de Maipo"]],
      ["Santiago Norte", ["Colina", "Lampa", "Tiltil"]],
      ["San Bernardo", ["San Bernardo", "Calera de Tango"]],
      ["Buin", ["Buin", "Paine"]],
      ["Melipilla", ["Melipilla", "Alhué", "María Pinto", "San Pedro"]],
      ["Santiago Poniente", ["Curacaví"]],
      ["Maipú", ["Talagante", "El Monte", "Isla de Maipo", "Padre Hurtado", "Peñaflor"]],
    ],
  },
  {
    iso: "CL-LI",
    regionalOffice: "Rancagua",
    provinces: [
      [
        "Rancagua",
        [
          "Rancagua",
          "Codegua",
          "Coinco",
          "Coltauco",
          "Doñihue",
          "Graneros",
          "Machalí",
          "Malloa",
          "Mostazal",
          "Olivar",
          "Quinta de Tilcoco",
          "Rengo",
          "Requínoa",
        ],
      ],
      ["San Vicente Tagua Tagua", ["Las Cabras", "Peumo", "Pichidegua", "San Vicente"]],
      // Navidad: not in LibreDTE's table; the unit of the rest of its province (Cardenal Caro)
      ["Pichilemu", ["Pichilemu", "La Estrella", "Litueche", "Marchihue", "Navidad", "Paredones"]],
      ["San Fernando", ["San Fernando", "Chimbarongo", "Nancagua", "Placilla"]],
      ["Santa Cruz", ["Chépica", "Lolol", "Palmilla", "Peralillo", "Pumanque", "Santa Cruz"]],
    ],
  },
  {
    iso: "CL-ML",
    regionalOffice: "Talca",
    provinces: [
      // San Rafael: not in LibreDTE's table; the unit of the rest of its province (Talca)
      ["Talca", ["Talca", "Curepto", "Maule", "Pelarco", "Pencahue", "Río Claro", "San Clemente", "San Rafael"]],
      ["Constitución", ["Constitución", "Empedrado"]],
      ["Cauquenes", ["Cauquenes", "Chanco", "Pelluhue"]],
      [
        "Curicó",
        ["Curicó", "Hualañé", "Licantén", "Molina", "Rauco", "Romeral", "Sagrada Familia", "Teno", "Vichuquén"],
      ],
      ["Linares", ["Linares", "Colbún", "Longaví", "Villa Alegre", "Yerbas Buenas"]],
      ["Parral", ["Parral", "Retiro"]],
      ["Talca", ["San Javier"]],
    ],
  },
  {
    iso: "CL-NB",
    regionalOffice: "Chillán",
    provinces: [
      [
        "Chillán",
        ["Chillán", "Bulnes", "Chillán Viejo", "El Carmen", "Pemuco", "Pinto", "Quillón", "San Ignacio", "Yungay"],
      ],
      ["Chillán", ["Quirihue", "Cobquecura", "Coelemu", "Ninhue", "Portezuelo", "Ránquil", "Treguaco"]],
      // Coihueco: not in LibreDTE's table; the unit of the rest of its province (Punilla)
      ["San Carlos", ["San Carlos", "Coihueco", "Ñiquén", "San Fabián", "San Nicolás"]],
    ],
  },
  {
    iso: "CL-BI",
    regionalOffice: "Concepción",
    provinces: [
      [
        "Concepción",
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
        ],
      ],
      ["Talcahuano", ["Talcahuano"]],
      ["Concepción", ["Tomé"]],
      ["Talcahuano", ["Hualpén"]],
      ["Lebu", ["Lebu"]],
      ["Concepción", ["Arauco"]],
      ["Lebu", ["Cañete", "Contulmo", "Curanilahue", "Los Álamos", "Tirúa"]],
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
        "Temuco",
        [
          "Temuco",
          "Carahue",
          "Cunco",
          "Freire",
          "Galvarino",
          "Gorbea",
          "Lautaro",
          "Loncoche",
          "Melipeuco",
          "Nueva Imperial",
          "Padre las Casas",
          "Perquenco",
          "Pitrufquén",
          "Saavedra",
          "Teodoro Schmidt",
          "Toltén",
          "Vilcún",
          "Cholchol",
        ],
      ],
      ["Villarrica", ["Curarrehue", "Pucón", "Villarrica"]],
      ["Angol", ["Angol", "Collipulli", "Ercilla", "Los Sauces", "Purén", "Renaico"]],
      ["Victoria", ["Curacautín", "Lonquimay", "Lumaco", "Traiguén", "Victoria"]],
    ],
  },
  {
    iso: "CL-LR",
    regionalOffice: "Valdivia",
    provinces: [
      ["Valdivia", ["Valdivia", "Corral", "Los Lagos", "Máfil", "Mariquina", "Paillaco"]],
      ["Lanco", ["Lanco"]],
      ["Panguipulli", ["Panguipulli"]],
      ["La Unión", ["La Unión", "Lago Ranco", "Río Bueno"]],
      ["Valdivia", ["Futrono"]],
    ],
  },
  {
    iso: "CL-LL",
    regionalOffice: "Puerto Montt",
    provinces: [
      ["Puerto Montt", ["Puerto Montt", "Calbuco", "Los Muermos", "Maullín"]],
      ["Puerto Varas", ["Cochamó", "Fresia", "Frutillar", "Llanquihue", "Puerto Varas"]],
      // Quinchao: not in LibreDTE's table; Castro, the unit of its neighbours Dalcahue and Curaco de Vélez
      ["Castro", ["Castro", "Chonchi", "Curaco de Vélez", "Dalcahue", "Puqueldón", "Queilén", "Quellón", "Quinchao"]],
      ["Ancud", ["Ancud", "Quemchi"]],
      ["Osorno", ["Osorno", "Puerto Octay", "Purranque", "Puyehue", "Río Negro", "San Juan de la Costa", "San Pablo"]],
      ["Chaitén", ["Chaitén", "Futaleufú", "Palena"]],
      ["Puerto Montt", ["Hualaihué"]],
    ],
  },
  {
    iso: "CL-AI",
    regionalOffice: "Coyhaique",
    provinces: [
      ["Coyhaique", ["Coyhaique"]],
      ["Aysén", ["Lago Verde", "Aysén", "Cisnes", "Guaitecas"]],
      ["Cochrane", ["Cochrane", "O'Higgins", "Tortel"]],
      ["Chile Chico", ["Chile Chico"]],
      ["Coyhaique", ["Río Ibáñez"]],
    ],
  },
  {
    iso: "CL-MA",
    regionalOffice: "Punta Arenas",
    provinces: [
      // Antártica: not in LibreDTE's table; the unit of the rest of its province (Antártica Chilena)
      ["Punta Arenas", ["Punta Arenas", "Laguna Blanca", "Río Verde", "San Gregorio", "Cabo de Hornos", "Antártica"]],
      ["Porvenir", ["Porvenir", "Primavera", "Timaukel"]],
      ["Puerto Natales", ["Natales", "Torres del Paine"]],
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
  "san francisco de mostazal": "Mostazal",
  "san fabian de alico": "San Fabián",
  "puerto saavedra": "Saavedra",
  "alto bio-bio": "Alto Biobío",
  "alto bio bio": "Alto Biobío",
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
    for (const name of names) BY_KEY.set(communeKey(name), { name, region: region.iso, siiOffice: office });
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
 * Oriente" for Las Condes, "Providencia" for Providencia, "Calama" for San Pedro de Atacama,
 * "Pichilemu" for Navidad). Null when
 * `name` is not a comuna of Chile (an issuer abroad, or a comuna given in a form not recognized):
 * the header then prints no office line.
 */
export function siiOfficeOf(name: string | null | undefined): string | null {
  return name ? (findCommune(name)?.siiOffice ?? null) : null;
}
