// Boost.JSON compiled here, in the library's header-only mode, instead of linked from Debian's
// libboost_json.so (built -O2 -fPIC, called through the PLT): the parser is then built with the
// project's flags and, in a profile-guided build, laid out by the profile like the rest of the
// request path (bench/RESULTS.md).
#include <boost/json/src.hpp>
