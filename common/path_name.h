/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks on a path's spelling, before anything opens it: what a rule
 * about directories must refuse to read other than literally.
 */
#ifndef KVMLU_COMMON_PATH_NAME_H
#define KVMLU_COMMON_PATH_NAME_H

#include <stdbool.h>

/* True if a component of p is "." or "..". */
bool path_has_dot_component(const char *p);

#endif /* KVMLU_COMMON_PATH_NAME_H */
