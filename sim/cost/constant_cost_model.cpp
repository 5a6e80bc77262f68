#include "sim/cost/constant_cost_model.hpp"
