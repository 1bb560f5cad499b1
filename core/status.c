/* muonref: status codes and error reports (see include/muonref/status.h). */
#include "muonref/status.h"

void muonref_error_clear(muonref_error *err)
{
  if (err) {
    err->status = MUONREF_OK;
    err->message[0] = '\0';
  }
}

const char *muonref_status_name(int status)
{
  switch (status) {
  case MUONREF_OK: return "MUONREF_OK";
  case MUONREF_EOPTION: return "MUONREF_EOPTION";
  case MUONREF_ESHAPE: return "MUONREF_ESHAPE";
  case MUONREF_ENONFINITE: return "MUONREF_ENONFINITE";
  case MUONREF_EGRAD: return "MUONREF_EGRAD";
  case MUONREF_ESTATE: return "MUONREF_ESTATE";
  case MUONREF_ENOMEM: return "MUONREF_ENOMEM";
  case MUONREF_EIO: return "MUONREF_EIO";
  case MUONREF_EFORMAT: return "MUONREF_EFORMAT";
  case MUONREF_ENUMERIC: return "MUONREF_ENUMERIC";
  default: return "unknown";
  }
}
