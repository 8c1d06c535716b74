// The one translation unit that compiles Boost.Asio, Asio's SSL support and Boost.Beast
// (BOOST_*_SEPARATE_COMPILATION is set for the whole project), so other units only parse headers.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
