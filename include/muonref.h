/* muonref: umbrella header of the muonref library (core and fast path). */
#ifndef MUONREF_H
#define MUONREF_H
#include "muonref/status.h"
#include "muonref/options.h"
#include "muonref/profile.h"
#include "muonref/presets.h"
#include "muonref/route.h"
#include "muonref/grad.h"
#include "muonref/bf16.h"
#include "muonref/ns.h"
#include "muonref/optimizer.h"
#include "muonref/state.h"
#endif
