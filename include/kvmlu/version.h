/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMLU_VERSION_H
#define KVMLU_VERSION_H
/* Written into every state FDT and reported by `status`. */
#define KVMLU_VERSION "0.1.0"
#endif
