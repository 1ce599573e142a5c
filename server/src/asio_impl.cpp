// The one translation unit that compiles Asio, Asio SSL and Beast (separate compilation:
// BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION are set for every
// file of the server), so the heavy headers are not compiled again in every file.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
