// The Durable Task Scheduler backend (chosen with durableBackend = 'durableTaskScheduler'): a scheduler,
// the app's task hub in it, and the Durable Task Data Contributor role on the scheduler for the app's
// identity (and for the deployer, whose browser opens the scheduler's dashboard).

param name string
param taskHubName string
param location string
param tags object = {}
param skuName string
@description('Principal id of the app\'s user-assigned identity.')
param managedIdentityPrincipalId string
@description('Object id of a person (or pipeline) who opens the dashboard; empty for none.')
param dashboardPrincipalId string = ''
param dashboardPrincipalType string = 'User'

var durableTaskDataContributor = '0ad04412-c4d5-4796-b79c-f76d14c8d402'

resource scheduler 'Microsoft.DurableTask/schedulers@2025-04-01-preview' = {
  name: name
  location: location
  tags: tags
  properties: {
    ipAllowlist: [
      '0.0.0.0/0'
    ]
    sku: {
      name: skuName
    }
  }
}

resource taskHub 'Microsoft.DurableTask/schedulers/taskHubs@2025-04-01-preview' = {
  parent: scheduler
  name: taskHubName
}

resource appDataContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(scheduler.id, managedIdentityPrincipalId, durableTaskDataContributor)
  scope: scheduler
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', durableTaskDataContributor)
    principalId: managedIdentityPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource dashboardDataContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(dashboardPrincipalId)) {
  name: guid(scheduler.id, dashboardPrincipalId, durableTaskDataContributor)
  scope: scheduler
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', durableTaskDataContributor)
    principalId: dashboardPrincipalId
    principalType: dashboardPrincipalType
  }
}

output name string = scheduler.name
output endpoint string = scheduler.properties.endpoint
output taskHubName string = taskHub.name
