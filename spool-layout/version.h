/*
 * version.h - the version of ckspool, one for all its programs
 * ("spool --version", "spoold --version", ...; the report's footer).
 * Every program of one spool must be of one version (spool-layout(5)).
 */
#ifndef CKSPOOL_VERSION_H
#define CKSPOOL_VERSION_H

#define CKSPOOL_VERSION "0.1"

#endif
