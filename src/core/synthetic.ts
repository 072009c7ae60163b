/**
 * How synthetic data is marked wherever it leaves a process (issue 22): the upstream simulator
 * signs every answer with SIMULATED_HEADER, which ingestion refuses unless told it runs a demo,
 * and a demo labels every response it serves with DATA_LABEL_HEADER.
 */
export const SIMULATED_HEADER = 'gridco2-simulated';
export const DATA_LABEL_HEADER = 'gridco2-data';
