// The one translation unit that compiles Boost.URL (Boost 1.81 ships it as headers plus this
// source file, and Debian has no libboost_url), so other units only parse its headers. Callers:
// base/url.cc (query encoding) and kube/request_info.cc (query decoding, request-targets).
#include <boost/url/src.hpp>
