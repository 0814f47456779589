/** Chile's comunas and the SII office of each (src/domain/chile-communes.ts). */
import { describe, expect, it } from "vitest";
import { CHILEAN_COMMUNES, communeKey, findCommune, siiOfficeOf } from "../../src/domain/chile-communes.js";

describe("comunas", () => {
  it("are Chile's 346, each once, each short enough for SII's CmnaRecep (20)", () => {
    expect(CHILEAN_COMMUNES).toHaveLength(346);
    expect(new Set(CHILEAN_COMMUNES.map(communeKey)).size).toBe(346);
    expect(CHILEAN_COMMUNES.filter((c) => c.length > 20)).toEqual([]);
  });

  it("have the CUT's count per region (SUBDERE, 2018) and its short forms as aliases", () => {
    const counts: Record<string, number> = {};
    for (const name of CHILEAN_COMMUNES) {
      const region = findCommune(name)!.region;
      counts[region] = (counts[region] ?? 0) + 1;
    }
    expect(counts).toEqual({
      "CL-AP": 4,
      "CL-TA": 7,
      "CL-AN": 9,
      "CL-AT": 9,
      "CL-CO": 15,
      "CL-VS": 38,
      "CL-RM": 52,
      "CL-LI": 33,
      "CL-ML": 30,
      "CL-NB": 21,
      "CL-BI": 33,
      "CL-AR": 32,
      "CL-LR": 12,
      "CL-LL": 30,
      "CL-AI": 10,
      "CL-MA": 11,
    });
    expect(findCommune("Calera")?.name).toBe("La Calera");
    expect(findCommune("Paihuano")?.name).toBe("Paiguano");
    expect(findCommune("Trehuaco")?.name).toBe("Treguaco");
    expect(findCommune("Coihaique")?.name).toBe("Coyhaique");
    expect(findCommune("Aisen")?.name).toBe("Aysén");
    expect(findCommune("PADRE LAS CASAS")?.name).toBe("Padre las Casas");
    expect(findCommune("San Francisco de Mostazal")?.name).toBe("Mostazal");
  });

  it("are found in any case, with or without accents, and by common aliases", () => {
    expect(findCommune("Ñuñoa")).toEqual({ name: "Ñuñoa", region: "CL-RM", siiOffice: "Ñuñoa" });
    expect(findCommune("  nunoa ")?.name).toBe("Ñuñoa");
    expect(findCommune("LOS ANGELES")?.name).toBe("Los Ángeles");
    expect(findCommune("Llay-Llay")?.name).toBe("Llaillay");
    expect(findCommune("Puerto Natales")?.name).toBe("Natales");
    expect(findCommune("o’higgins")?.name).toBe("O'Higgins");
    expect(findCommune("Gotham")).toBeNull();
    expect(findCommune("")).toBeNull();
  });
});

describe("SII office of a comuna (LibreDTE's table, checked entry by entry)", () => {
  it("the Región Metropolitana: five Direcciones Regionales and the local units", () => {
    expect(siiOfficeOf("Santiago")).toBe("Santiago Centro");
    expect(siiOfficeOf("Las Condes")).toBe("Santiago Oriente");
    expect(siiOfficeOf("Providencia")).toBe("Providencia");
    expect(siiOfficeOf("Peñalolén")).toBe("Ñuñoa");
    expect(siiOfficeOf("Maipú")).toBe("Maipú");
    expect(siiOfficeOf("Talagante")).toBe("Maipú");
    expect(siiOfficeOf("Melipilla")).toBe("Melipilla");
    expect(siiOfficeOf("Curacaví")).toBe("Santiago Poniente");
    expect(siiOfficeOf("La Florida")).toBe("La Florida");
    expect(siiOfficeOf("Puente Alto")).toBe("La Florida");
    expect(siiOfficeOf("El Bosque")).toBe("San Bernardo");
    expect(siiOfficeOf("Paine")).toBe("Buin");
    expect(siiOfficeOf("Colina")).toBe("Santiago Norte");
    expect(siiOfficeOf("Quilicura")).toBe("Santiago Norte");
    expect(siiOfficeOf("San Ramón")).toBe("Santiago Sur");
    const rm = CHILEAN_COMMUNES.filter((c) => findCommune(c)!.region === "CL-RM");
    expect(rm).toHaveLength(52);
    expect(new Set(rm.map((c) => siiOfficeOf(c)))).toEqual(
      new Set([
        "Santiago Centro",
        "Santiago Norte",
        "Santiago Oriente",
        "Santiago Poniente",
        "Santiago Sur",
        "Providencia",
        "Ñuñoa",
        "Maipú",
        "La Florida",
        "San Bernardo",
        "Buin",
        "Melipilla",
      ]),
    );
  });

  it("each regional capital has its region's Dirección Regional", () => {
    const capitals: Record<string, string> = {
      Arica: "Arica",
      Iquique: "Iquique",
      Antofagasta: "Antofagasta",
      Copiapó: "Copiapó",
      "La Serena": "La Serena",
      Valparaíso: "Valparaíso",
      Rancagua: "Rancagua",
      Talca: "Talca",
      Chillán: "Chillán",
      Concepción: "Concepción",
      Temuco: "Temuco",
      Valdivia: "Valdivia",
      "Puerto Montt": "Puerto Montt",
      Coyhaique: "Coyhaique",
      "Punta Arenas": "Punta Arenas",
    };
    for (const [capital, office] of Object.entries(capitals)) expect(siiOfficeOf(capital), capital).toBe(office);
  });

  it("the local units outside the capital, and the comunas LibreDTE's table lacks", () => {
    const units: Record<string, string> = {
      Taltal: "Taltal",
      "San Pedro de Atacama": "Calama",
      "Diego de Almagro": "Chañaral",
      Coquimbo: "Coquimbo",
      Concón: "Viña del Mar",
      Quilpué: "Villa Alemana",
      Limache: "Quillota",
      "Isla de Pascua": "Valparaíso",
      Peumo: "San Vicente Tagua Tagua",
      Lolol: "Santa Cruz",
      Pichilemu: "Pichilemu",
      Empedrado: "Constitución",
      Retiro: "Parral",
      "San Javier": "Talca",
      Ñiquén: "San Carlos",
      Hualpén: "Talcahuano",
      Cañete: "Lebu",
      Arauco: "Concepción",
      Pucón: "Villarrica",
      Traiguén: "Victoria",
      Lanco: "Lanco",
      Panguipulli: "Panguipulli",
      "Río Bueno": "La Unión",
      Futrono: "Valdivia",
      Frutillar: "Puerto Varas",
      Ancud: "Ancud",
      Chonchi: "Castro",
      Futaleufú: "Chaitén",
      Hualaihué: "Puerto Montt",
      "Lago Verde": "Aysén",
      "Río Ibáñez": "Coyhaique",
      Tortel: "Cochrane",
      "Chile Chico": "Chile Chico",
      Natales: "Puerto Natales",
      Timaukel: "Porvenir",
      // not in LibreDTE's table: the unit of the rest of the province (Quinchao: its neighbours')
      Navidad: "Pichilemu",
      "San Rafael": "Talca",
      Coihueco: "San Carlos",
      Quinchao: "Castro",
      Antártica: "Punta Arenas",
    };
    for (const [commune, office] of Object.entries(units)) expect(siiOfficeOf(commune), commune).toBe(office);
    expect(siiOfficeOf("Chiloé" /* a province, not a comuna */)).toBeNull();
  });

  it("every comuna has an office; unknown or empty names have none", () => {
    for (const c of CHILEAN_COMMUNES) expect(siiOfficeOf(c), c).toBeTruthy();
    expect(siiOfficeOf("Buenos Aires")).toBeNull();
    expect(siiOfficeOf(null)).toBeNull();
  });
});
